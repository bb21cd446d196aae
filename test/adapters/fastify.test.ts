/**
 * The Fastify plugin beside a host application: plugin conventions (name, Fastify version, options
 * checked), Fastify's body parsing off on its routes only, the host's routes, hooks, parsers and
 * 404 handler untouched, prefixes, and Fastify's refusal of undecodable URLs. The answers
 * themselves are the conformance suite's (test/conformance, target "fastify plugin").
 */
import http from "node:http";
import Fastify from "fastify";
import { test } from "uvu";
import * as assert from "uvu/assert";
import petStoreDefault, { petStore, petStoreFrameworkErrors, petStorePlugin } from "../../adapters/fastify.ts";
import type { PetStore } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";

const KEY = "fastify-test-key";
const auth = { authorization: `Bearer ${KEY}` };
const json = { ...auth, "content-type": "application/json" };

function store(basePath?: string): PetStore {
  return createPetStore({ auth: [KEY], ...(basePath ? { basePath } : {}) });
}

test("fastify: the default export is the plugin, named petstore-lib, encapsulated (fastify-plugin's meta, set without it)", async () => {
  assert.is(petStoreDefault, petStorePlugin);
  assert.is(petStore, petStorePlugin, "petStore: the deprecated name of the same plugin");
  const symbols = petStorePlugin as unknown as Record<symbol, unknown>;
  const meta = symbols[Symbol.for("plugin-meta")] as { name: string; fastify?: string } | undefined;
  assert.is(meta?.name, "petstore-lib");
  assert.is(meta?.fastify, undefined, "no range for Fastify to check: the plugin says it in one line");
  assert.is(symbols[Symbol.for("fastify.display-name")], "petstore-lib");
  assert.is(symbols[Symbol.for("skip-override")], false, "its own encapsulated context");
  const app = Fastify();
  await app.register(petStorePlugin, { store: store() });
  await app.ready();
  assert.ok(app.hasPlugin("petstore-lib"));
  await app.close();
});

test("fastify: an older Fastify is refused in one line naming the version it found", () => {
  for (const version of ["4.29.1", "3.29.5"]) {
    let refused: Error | undefined;
    const host = { version, prefix: "" } as unknown as Parameters<typeof petStorePlugin>[0];
    petStorePlugin(host, { store: store() }, (error?: Error) => {
      refused = error;
    });
    assert.is(refused?.message, `petstore-lib/fastify needs fastify 5 or later; this project has fastify ${version}`);
  }
});

test("fastify: options are checked with a clear error (missing store, not a store, unknown option)", async () => {
  const cases: [unknown, RegExp][] = [
    [undefined, /options.store must be a store from createPetStore\(\)/],
    [{ store: {} }, /options.store must be a store from createPetStore\(\)/],
    [
      { store: store(), stores: 1 },
      /petstore-lib\/fastify: unknown option "stores" \(known: store, prefix, logLevel, logSerializers\)/,
    ],
  ];
  for (const [options, message] of cases) {
    const app = Fastify();
    // biome-ignore lint/suspicious/noExplicitAny: wrong options on purpose
    app.register(petStorePlugin, options as any);
    try {
      await app.ready();
      assert.unreachable(`register accepted ${JSON.stringify(options)}`);
    } catch (error) {
      assert.match((error as Error).message, message);
    } finally {
      await app.close().catch(() => {});
    }
  }
});

test("fastify: the host's routes, hooks, JSON parser, body limit and 404 handler keep working beside the plugin", async () => {
  const app = Fastify({ bodyLimit: 100 }); // far below a pet store body of 1,000 bytes
  const seen: string[] = [];
  app.addHook("onRequest", async (request, reply) => {
    seen.push(request.url);
    reply.header("x-host-hook", "yes");
  });
  app.setNotFoundHandler((_request, reply) => {
    reply.code(404).send({ host: "not here" });
  });
  app.post("/echo", async (request) => ({ echoed: request.body }));
  await app.register(petStorePlugin, { store: store() });

  const echo = await app.inject({ method: "POST", url: "/echo", payload: { a: 1 } });
  assert.equal([echo.statusCode, echo.json()], [200, { echoed: { a: 1 } }], "the host's JSON parser");
  const tooBig = await app.inject({ method: "POST", url: "/echo", payload: { a: "x".repeat(200) } });
  assert.is(tooBig.statusCode, 413, "the host's body limit on the host's route");

  const pet = '{"name":"Rex","categoryId":1}'.padEnd(900, " ");
  const created = await app.inject({ method: "POST", url: "/v1/pets", headers: json, payload: pet });
  assert.is(created.statusCode, 201, created.payload);
  assert.is(created.headers.location, "/v1/pets/1");
  assert.is(created.headers["x-host-hook"], "yes", "the host's hook runs on the plugin's routes");

  const malformed = await app.inject({ method: "POST", url: "/v1/pets", headers: json, payload: "{oops" });
  assert.is(JSON.parse(malformed.payload).code, "malformed_json", "the core judges the body, not Fastify");

  const elsewhere = await app.inject({ method: "GET", url: "/elsewhere" });
  assert.equal([elsewhere.statusCode, elsewhere.json()], [404, { host: "not here" }], "the host's 404 handler");
  const under = await app.inject({ method: "GET", url: "/v1/owners" });
  assert.is(JSON.parse(under.payload).code, "not_found", "under the base path, the core's 404");
  assert.equal(seen, ["/echo", "/echo", "/v1/pets", "/v1/pets", "/elsewhere", "/v1/owners"]);
  await app.close();
});

test("fastify: a prefix is part of the base path (prefix /shop, basePath /shop/v1); a base path outside it is refused", async () => {
  const app = Fastify();
  await app.register(petStorePlugin, { store: store("/shop/v1"), prefix: "/shop" });
  const created = await app.inject({
    method: "POST",
    url: "/shop/v1/pets",
    headers: json,
    payload: '{"name":"Rex","categoryId":1}',
  });
  assert.equal([created.statusCode, created.headers.location], [201, "/shop/v1/pets/1"]);
  const list = await app.inject({ method: "GET", url: "/shop/v1/pets", headers: auth });
  assert.is(JSON.parse(list.payload).length, 1);
  await app.close();

  const wrong = Fastify();
  wrong.register(petStorePlugin, { store: store("/v1"), prefix: "/shop" });
  try {
    await wrong.ready();
    assert.unreachable("a base path outside the prefix was accepted");
  } catch (error) {
    assert.match((error as Error).message, /prefix "\/shop", the store's basePath must start with it/);
  } finally {
    await wrong.close().catch(() => {});
  }
});

test("fastify: two stores on two base paths in one app", async () => {
  const app = Fastify();
  await app.register(petStorePlugin, { store: store("/a") });
  await app.register(petStorePlugin, { store: store("/b") });
  await app.inject({ method: "POST", url: "/a/pets", headers: json, payload: '{"name":"A","categoryId":1}' });
  const a = await app.inject({ method: "GET", url: "/a/pets", headers: auth });
  const b = await app.inject({ method: "GET", url: "/b/pets", headers: auth });
  assert.equal([JSON.parse(a.payload).length, JSON.parse(b.payload).length], [1, 0]);
  await app.close();
});

test("fastify: a URL Fastify cannot decode is Fastify's 400 by default; with petStoreFrameworkErrors the core answers it", async () => {
  const s = store();
  const plain = Fastify();
  await plain.register(petStorePlugin, { store: s });
  const refused = await plain.inject({ method: "GET", url: "/v1/pets/%zz", headers: auth });
  assert.equal([refused.statusCode, JSON.parse(refused.payload).code], [400, "FST_ERR_BAD_URL"]);
  await plain.close();

  const app = Fastify({ frameworkErrors: petStoreFrameworkErrors(s) });
  await app.register(petStorePlugin, { store: s });
  const answered = await app.inject({ method: "GET", url: "/v1/pets/%zz", headers: auth });
  assert.equal([answered.statusCode, JSON.parse(answered.payload).code], [400, "invalid_pet_id"]);
  assert.is(answered.headers.deprecation, "@1795564800");
  const outside = await app.inject({ method: "GET", url: "/elsewhere/%zz" });
  assert.equal([outside.statusCode, JSON.parse(outside.payload).code], [400, "FST_ERR_BAD_URL"], "outside: Fastify's");
  await app.close();
});

test("fastify: an early answer to a large unread upload says Connection: close (the body is not drained)", async () => {
  const app = Fastify();
  await app.register(petStorePlugin, { store: store() });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const port = (app.server.address() as { port: number }).port;
  try {
    const answer = await new Promise<{ status: number; connection: string | undefined; body: string }>(
      (resolve, reject) => {
        const req = http.request({
          host: "127.0.0.1",
          port,
          method: "POST",
          path: "/v1/pets",
          headers: { "content-type": "application/json", "content-length": "10000000" }, // no key
        });
        req.on("response", (res) => {
          let body = "";
          res.setEncoding("utf8").on("data", (s: string) => {
            body += s;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
        });
        req.on("error", reject);
        req.flushHeaders(); // the headers only: the 10 MB never come
      },
    );
    assert.is(answer.status, 401);
    assert.is(answer.connection, "close");
    assert.is(JSON.parse(answer.body).code, "unauthorized");
  } finally {
    await app.close();
  }
});

test.run();
