/** examples/hono: a Hono application with its own routes and middleware, the pet store under /v1 through c.req.raw. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { app } from "../../examples/hono/app.ts";
import { ROOT, startProgram } from "../support/program.ts";
import { runtimeAvailable } from "../support/runtimes.ts";

const auth = { authorization: "Bearer pets-api-key" };

test("examples/hono: Hono's own route and middleware stay; /v1 is the pet store's (401, 201 with Location, the list, HEAD, JSON 404)", async () => {
  const home = await app.request("/");
  assert.is(await home.text(), "Welcome to Happy Paws. The pet API lives under /v1.");
  const anonymous = await app.request("/v1/pets");
  assert.is(anonymous.status, 401);
  assert.is(anonymous.headers.get("x-served-by"), "hono", "the application's middleware ran around the store");
  const created = await app.request("/v1/pets", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: '{"name":"Tom","categoryId":2}',
  });
  assert.is(created.status, 201);
  assert.is(created.headers.get("location"), "/v1/pets/1");
  const list = await app.request("/v1/pets?limit=5", { headers: auth });
  assert.is(await list.text(), '[{"id":1,"name":"Tom","categoryId":2,"status":"available"}]');
  const head = await app.request("/v1/pets", { method: "HEAD", headers: auth });
  assert.is(head.status, 200);
  assert.is(await head.text(), "");
  const unknown = await app.request("/v1", { headers: auth });
  assert.is(unknown.status, 404);
  assert.equal(await unknown.json(), { code: "not_found", message: "No such route.", status: 404 });
});

if (runtimeAvailable("bun", "examples/hono")) {
  test("examples/hono: run as a program (bun), it prints the key to send; imported (as above), nothing", async () => {
    const program = startProgram(["examples/hono/app.ts"], { PORT: "0" }, { command: `${ROOT}/node_modules/.bin/bun` });
    try {
      const line = await program.line(/^Hono app: /, 60_000);
      assert.is(line, 'Hono app: the pet store is under /v1; send "Authorization: Bearer pets-api-key"');
    } finally {
      await program.kill();
    }
  });
}

test.run();
