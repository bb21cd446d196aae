/**
 * The hapi plugin inside a host application: real routes in server.table(), coexistence with the
 * host's routes and default auth strategy, option checks, and the same answers as the Node
 * adapter over real sockets. The HTTP contract itself is proven by test/conformance.
 */
import http from "node:http";
import { gunzipSync } from "node:zlib";
import Hapi from "@hapi/hapi";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { petStorePlugin } from "../../adapters/hapi.ts";
import { createNodeHandler } from "../../adapters/node-http.ts";
import { createPetStore } from "../../lib/index.ts";

const KEY = "hapi-key";
const auth = { authorization: `Bearer ${KEY}` };

test("hapi: the plugin adds real routes under the base path, listed by server.table()", async () => {
  const server = Hapi.server();
  await server.register({ plugin: petStorePlugin, options: { store: createPetStore({ auth: [KEY] }) } });
  const routes = server
    .table()
    .map((r) => `${r.method} ${r.path}`)
    .sort();
  assert.equal(routes, ["* /v1/{path*}", "get /v1/pets", "get /v1/pets/{petId}", "post /v1/pets"]);
  for (const r of server.table()) {
    assert.is(r.settings.auth, false, `${r.path}: the host's default auth does not apply`);
    if (r.method !== "get") {
      assert.is(r.settings.payload?.parse, false, `${r.method} ${r.path}: hapi does not parse the payload`);
    }
  }
});

test("hapi: an older hapi is refused in one line naming the version it found", () => {
  for (const version of ["20.3.0", "19.2.0"]) {
    const server = { version, realm: { modifiers: { route: {} } } } as unknown as Parameters<
      typeof petStorePlugin.register
    >[0];
    assert.throws(
      () => petStorePlugin.register(server, { store: createPetStore({ auth: [KEY] }) }),
      (error: Error) =>
        error.message === `petstore-lib/hapi needs @hapi/hapi 21 or later; this project has @hapi/hapi ${version}`,
    );
  }
});

test("hapi: host routes and the host's default auth strategy live beside the plugin's routes", async () => {
  const server = Hapi.server();
  server.auth.scheme("host-scheme", () => ({
    authenticate: (request, h) =>
      request.headers["x-host-session"] === "ok"
        ? h.authenticated({ credentials: { user: "host" } })
        : h.response({ error: "host login required" }).code(401).takeover(),
  }));
  server.auth.strategy("host", "host-scheme");
  server.auth.default("host");
  server.route({ method: "GET", path: "/account", handler: () => ({ page: "account" }) });
  server.route({ method: "GET", path: "/v1/status", handler: () => ({ host: "status" }) });
  await server.register({ plugin: petStorePlugin, options: { store: createPetStore({ auth: [KEY] }) } });

  assert.is((await server.inject({ url: "/account" })).statusCode, 401, "the host's auth guards its routes");
  const account = await server.inject({ url: "/account", headers: { "x-host-session": "ok" } });
  assert.equal(account.result, { page: "account" });
  const pets = await server.inject({ url: "/v1/pets", headers: auth });
  assert.is(pets.statusCode, 200, "the API is guarded by its own bearer keys only");
  assert.is(pets.payload, "[]");
  const noKey = await server.inject({ url: "/v1/pets", headers: { "x-host-session": "ok" } });
  assert.is(noKey.statusCode, 401);
  assert.is(noKey.headers["www-authenticate"], 'Bearer realm="petstore"');
  const hostUnderBase = await server.inject({ url: "/v1/status", headers: { "x-host-session": "ok" } });
  assert.equal(hostUnderBase.result, { host: "status" }, "a host route under the base path keeps precedence");
  const outside = await server.inject({ url: "/nowhere", headers: { "x-host-session": "ok" } });
  assert.is(outside.statusCode, 404);
  assert.is(JSON.parse(outside.payload).error, "Not Found", "outside the base path, 404 is the host's own");
});

test("hapi: options are checked, with a clear error", async () => {
  const bad: [unknown, RegExp][] = [
    [undefined, /options\.store must be a store from createPetStore/],
    [null, /options \{ store \} are required|options\.store must be/],
    [{}, /options\.store must be a store from createPetStore/],
    [{ store: { handle: "no" } }, /options\.store must be a store/],
    [{ store: createPetStore({ auth: [KEY] }), basePath: "/x" }, /unknown option "basePath"/],
  ];
  for (const [options, message] of bad) {
    const server = Hapi.server();
    try {
      await server.register({ plugin: petStorePlugin, options: options as never });
      assert.unreachable(`accepted ${JSON.stringify(options)}`);
    } catch (error) {
      assert.match((error as Error).message, message);
    }
  }
});

test("hapi: a routes.prefix is refused, pointing to the store's basePath", async () => {
  const server = Hapi.server();
  try {
    await server.register(
      { plugin: petStorePlugin, options: { store: createPetStore({ auth: [KEY] }) } },
      { routes: { prefix: "/api" } },
    );
    assert.unreachable("accepted a prefix");
  } catch (error) {
    assert.match((error as Error).message, /basePath: "\/api\/v1"/);
  }
});

test("hapi: two stores with different base paths can be served by one server", async () => {
  const server = Hapi.server();
  const eu = createPetStore({ auth: [KEY], basePath: "/eu/v1" });
  const us = createPetStore({ auth: [KEY], basePath: "/us/v1" });
  await eu.createPet({ name: "Rex", categoryId: 1 });
  await server.register([
    { plugin: petStorePlugin, options: { store: eu } },
    { plugin: petStorePlugin, options: { store: us } },
  ]);
  assert.is((await server.inject({ url: "/eu/v1/pets", headers: auth })).payload.length > 2, true);
  assert.is((await server.inject({ url: "/us/v1/pets", headers: auth })).payload, "[]");
});

/** Sends one raw request and returns status, headers (transport headers removed) and body. */
function exchange(port: number, method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path, headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (s: string) => {
        text += s;
      });
      res.on("end", () => {
        const h: Record<string, unknown> = { ...res.headers };
        for (const name of ["date", "connection", "keep-alive", "x-request-id"]) delete h[name];
        // hapi writes the Vary of its compression in lower case: see the next test.
        if (typeof h.vary === "string") h.vary = h.vary.toLowerCase();
        resolve({ status: res.statusCode ?? 0, headers: h, body: text });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

test("hapi: over real sockets, answers are the Node adapter's: statuses, headers and bodies", async () => {
  const hapiStore = createPetStore({ auth: [KEY] });
  const nodeStore = createPetStore({ auth: [KEY] });
  const server = Hapi.server({ port: 0, host: "127.0.0.1" });
  await server.register({ plugin: petStorePlugin, options: { store: hapiStore } });
  await server.start();
  const node = http.createServer(createNodeHandler(nodeStore));
  await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
  const nodePort = (node.address() as { port: number }).port;
  const json = { ...auth, "content-type": "application/json" };
  const requests: [string, string, Record<string, string>, string?][] = [
    ["POST", "/v1/pets", json, '{"name":"Rex","categoryId":1}'],
    ["POST", "/v1/pets", json, '{"name":'],
    ["POST", "/v1/pets", { ...auth, "content-type": "text/plain" }, "hi"],
    ["POST", "/v1/pets", { ...json, "content-length": "100000" }, "{}".padEnd(100_000)],
    ["GET", "/v1/pets?limit=1", auth],
    ["HEAD", "/v1/pets/1", auth],
    ["GET", "/v1/pets/1", { cookie: "bad cookie;;; =x" }],
    ["DELETE", "/v1/pets/1", auth],
    ["OPTIONS", "/v1/pets", {}],
    ["GET", "/v1/pets/%E0%A4%A", auth],
  ];
  try {
    for (const [method, path, headers, body] of requests) {
      const viaHapi = await exchange(server.info.port as number, method, path, headers, body);
      const viaNode = await exchange(nodePort, method, path, headers, body);
      assert.equal(viaHapi, viaNode, `${method} ${path}`);
    }
  } finally {
    await server.stop();
    node.closeAllConnections();
    await new Promise((resolve) => node.close(resolve));
  }
});

test("hapi: Vary: accept-encoding once on every pet and page (the store's, which hapi's compression finds), not on a small error", async () => {
  const store = createPetStore({ auth: [KEY], cors: { origins: ["https://shop.example"] } });
  for (let i = 0; i < 30; i++) await store.createPet({ name: `pet-${i}`, categoryId: 1 });
  const server = Hapi.server();
  await server.register({ plugin: petStorePlugin, options: { store } });
  const plain = await server.inject({ url: "/v1/pets", headers: auth });
  assert.is(plain.headers.vary, "accept-encoding");
  assert.is((await server.inject({ url: "/v1/pets/1", headers: auth })).headers.vary, "accept-encoding");
  const page = await server.inject({ url: "/v1/pets", headers: { ...auth, origin: "https://shop.example" } });
  assert.is(page.headers.vary, "Origin,accept-encoding");
  assert.is((await server.inject({ url: "/v1/pets/99", headers: auth })).headers.vary, undefined, "a small error");
  const direct = await store.handle({ method: "GET", path: "/v1/pets", headers: auth });
  assert.is(plain.payload, direct.body);
  const gzip = await server.inject({ url: "/v1/pets", headers: { ...auth, "accept-encoding": "gzip" } });
  assert.is(gzip.headers["content-encoding"], "gzip");
  assert.is(gunzipSync(gzip.rawPayload).toString("utf8"), direct.body);
  const off = Hapi.server({ compression: false });
  await off.register({ plugin: petStorePlugin, options: { store } });
  const big = await off.inject({ url: "/v1/pets", headers: { ...auth, "accept-encoding": "gzip" } });
  assert.is(big.headers["content-encoding"], undefined, "hapi's compression off: nothing coded");
  assert.is(big.headers.etag, plain.headers.etag);
});

test('hapi: an answer hapi compressed has its own ETag ("tag-gzip"), which If-None-Match may send back for a 304', async () => {
  const store = createPetStore({ auth: [KEY] });
  for (let i = 0; i < 30; i++) await store.createPet({ name: `pet-${i}`, categoryId: 1 });
  const server = Hapi.server();
  await server.register({ plugin: petStorePlugin, options: { store } });
  const gzip = { ...auth, "accept-encoding": "gzip" };
  const plain = await server.inject({ url: "/v1/pets", headers: auth });
  const coded = await server.inject({ url: "/v1/pets", headers: gzip });
  const tag = plain.headers.etag as string;
  assert.is(coded.headers.etag, `${tag.slice(0, -1)}-gzip"`);
  for (const held of [coded.headers.etag as string, `W/${coded.headers.etag}`, "*"]) {
    const again = await server.inject({ url: "/v1/pets", headers: { ...gzip, "if-none-match": held } });
    assert.is(again.statusCode, 304, held);
    assert.is(again.headers.etag, coded.headers.etag, `${held}: the 304 names the coded answer`);
    assert.is(again.headers.vary, "accept-encoding");
    assert.is(again.headers["content-type"], undefined);
    assert.is(again.rawPayload.length, 0);
  }
  // A client that holds the plain answer is told it is still good (its own tag), not sent the coded one.
  const held = await server.inject({ url: "/v1/pets", headers: { ...gzip, "if-none-match": tag } });
  assert.is(held.statusCode, 304);
  assert.is(held.headers.etag, tag);
  // A small pet is never compressed: its tag stays the plain one, for its 304 too.
  const pet = await server.inject({ url: "/v1/pets/1", headers: gzip });
  assert.is(pet.headers["content-encoding"], undefined);
  const petAgain = await server.inject({ url: "/v1/pets/1", headers: { ...gzip, "if-none-match": "*" } });
  assert.is(petAgain.statusCode, 304);
  assert.is(petAgain.headers.etag, pet.headers.etag);
});

test("hapi: an answer from memory storage is handed to hapi at once; one that waits, as a promise", async () => {
  /** Calls the plugin's handler for GET /v1/pets the way hapi does, with a toolkit that records the response. */
  async function callHandler(store: ReturnType<typeof createPetStore>) {
    const server = Hapi.server();
    await server.register({ plugin: petStorePlugin, options: { store } });
    const route = server.table().find((r) => r.method === "get" && r.path === "/v1/pets");
    const handler = route?.settings.handler as (request: unknown, h: unknown) => unknown;
    const made = { status: 0, headers: {} as Record<string, string>, body: "" };
    const response = {
      code(status: number) {
        made.status = status;
        return response;
      },
      header(name: string, value: string) {
        made.headers[name] = value;
        return response;
      },
      vary(name: string) {
        made.headers.vary = name;
        return response;
      },
      etag(tag: string) {
        made.headers.etag = `"${tag}"`;
        return response;
      },
    };
    const h = {
      response(body: string) {
        made.body = body;
        return response;
      },
    };
    const raw = { req: { method: "GET", url: "/v1/pets?limit=5", headers: auth } };
    const hapiSide = {
      server: { settings: { compression: { minBytes: 1024 } } },
      info: { acceptEncoding: "identity" },
    };
    return { result: handler({ raw, payload: undefined, method: "get", path: "/v1/pets", ...hapiSide }, h), made };
  }
  const store = createPetStore({ auth: [KEY] });
  await store.createPet({ name: "Rex", categoryId: 1 });
  const now = await callHandler(store);
  assert.not.ok(now.result instanceof Promise, "no promise between the core and hapi");
  assert.is(now.made.status, 200);
  assert.equal(JSON.parse(now.made.body), [{ id: 1, name: "Rex", categoryId: 1, status: "available" }]);
  assert.is(now.made.headers["content-type"], "application/json; charset=utf-8");
  // An asynchronous verify function has to be waited for: the response comes with the promise.
  const later = await callHandler(createPetStore({ auth: async (token: string) => token === KEY }));
  assert.ok(later.result instanceof Promise);
  assert.is(later.made.status, 0);
  await later.result;
  assert.is(later.made.status, 200);
});

test.run();
