/**
 * examples/nextjs: the route handler file app/v1/[...path]/route.ts, its exports called as
 * Next.js calls them (one Web standard Request each). Type-checked by `npm run typecheck`.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import * as route from "../../examples/nextjs/app/v1/[...path]/route.ts";

const auth = { authorization: "Bearer pets-api-key" };
const url = (path: string) => `https://shop.example${path}`;

test("examples/nextjs: the route file exports every method and the Node.js runtime, uncached", () => {
  const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = route;
  for (const handler of [GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS]) assert.type(handler, "function");
  assert.is(route.runtime, "nodejs");
  assert.is(route.dynamic, "force-dynamic");
});

test("examples/nextjs: the exported handlers answer the contract: 201 with Location, the list, getPet, HEAD, 405 with Allow", async () => {
  const created = await route.POST(
    new Request(url("/v1/pets"), {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: '{"name":"Tom","categoryId":2}',
    }),
  );
  assert.is(created.status, 201);
  assert.is(created.headers.get("location"), "/v1/pets/1");
  const list = await route.GET(new Request(url("/v1/pets"), { headers: auth }));
  assert.is(await list.text(), '[{"id":1,"name":"Tom","categoryId":2,"status":"available"}]');
  const one = await route.GET(new Request(url("/v1/pets/1"), { headers: auth }));
  assert.is(one.headers.get("sunset"), "Thu, 05 Dec 2030 00:00:00 GMT");
  const head = await route.HEAD(new Request(url("/v1/pets/1"), { method: "HEAD", headers: auth }));
  assert.is(head.status, 200);
  assert.is(head.body, null);
  const put = await route.PUT(new Request(url("/v1/pets/1"), { method: "PUT", headers: auth }));
  assert.is(put.status, 405);
  assert.is(put.headers.get("allow"), "GET, HEAD");
});

test.run();
