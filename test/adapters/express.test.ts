/**
 * The Node adapter in Express 4 and 5, as a new user mounts it: at the root and under a mount
 * path, before and after `express.json()`, next to the host's routes. The answers themselves are
 * the conformance suite's (test/conformance, the "express" targets).
 */
import http from "node:http";
import express5 from "express";
import express4 from "express4";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createNodeHandler } from "../../adapters/node-http.ts";
import { createPetStore, type PetStore } from "../../lib/index.ts";

const KEY = "express-test-key";
const auth = { authorization: `Bearer ${KEY}` };
const json = { ...auth, "content-type": "application/json" };
const REX = '{"name":"Rex","categoryId":1}';

type Express = typeof express5;

/** An Express app with a host route, the store at the root or under `mount`, before or after express.json(). */
async function app(express: Express, order: "store first" | "parser first", mount?: string) {
  const errors: unknown[] = [];
  const store = createPetStore({ auth: [KEY], basePath: `${mount ?? ""}/v1`, onError: (e) => errors.push(e) });
  const host = express();
  const handler = createNodeHandler(store);
  const useStore = () => (mount ? host.use(mount, handler) : host.use(handler));
  if (order === "store first") useStore();
  host.use(express.json());
  if (order === "parser first") useStore();
  host.post(`${mount ?? ""}/echo`, (req, res) => {
    res.json({ echoed: req.body });
  });
  const server = http.createServer(host);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    errors,
    url: (path: string) => `${origin}${mount ?? ""}${path}`,
    origin,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await store.close();
    },
  };
}

const versions: [string, Express][] = [
  ["express 4", express4],
  ["express 5", express5],
];

for (const [version, express] of versions) {
  for (const mount of [undefined, "/shop"]) {
    const where = mount ? `mounted at ${mount}` : "at the root";

    test(`${version} ${where}, before express.json(): the API answers (201, Location with the mount), without X-Powered-By; the host's routes and parser keep working`, async () => {
      const a = await app(express, "store first", mount);
      try {
        const created = await fetch(a.url("/v1/pets"), { method: "POST", headers: json, body: REX });
        assert.is(created.status, 201);
        assert.is(created.headers.get("location"), `${mount ?? ""}/v1/pets/1`);
        assert.is(created.headers.get("x-powered-by"), null);
        const malformed = await fetch(a.url("/v1/pets"), { method: "POST", headers: json, body: "{oops" });
        assert.equal([malformed.status, ((await malformed.json()) as { code: string }).code], [400, "malformed_json"]);
        const echo = await fetch(a.url("/echo"), { method: "POST", headers: json, body: '{"a":1}' });
        assert.equal([echo.status, await echo.json()], [200, { echoed: { a: 1 } }]);
        assert.is(echo.headers.get("x-powered-by"), "Express", "the host's own answers are the host's");
        const missing = await fetch(a.url("/nowhere"));
        assert.is(missing.status, 404);
        assert.match(await missing.text(), /Cannot GET/, "outside the base path: Express's 404");
        assert.equal(a.errors, []);
      } finally {
        await a.close();
      }
    });

    test(`${version} ${where}, after express.json(): a body it already read is 500 internal_error and onError says to mount the store before body parsers, never a 400`, async () => {
      const a = await app(express, "parser first", mount);
      try {
        const created = await fetch(a.url("/v1/pets"), { method: "POST", headers: json, body: REX });
        const body = (await created.json()) as { code: string };
        assert.equal([created.status, body.code], [500, "internal_error"]);
        assert.is(created.headers.get("x-powered-by"), null);
        assert.is(a.errors.length, 1);
        assert.match(String((a.errors[0] as Error).message), /mount the pet store .* before body parsers/);
        // What needs no body still works: a list, and a POST refused before its body is read.
        const list = await fetch(a.url("/v1/pets"), { headers: auth });
        assert.equal([list.status, await list.text()], [200, "[]"]);
        const noKey = await fetch(a.url("/v1/pets"), {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: REX,
        });
        assert.is(noKey.status, 401);
        assert.is(a.errors.length, 1);
      } finally {
        await a.close();
      }
    });
  }

  test(`${version}: a store whose basePath leaves out the mount path is not reached (the request goes on to Express), and one console warning names the basePath to set`, async () => {
    const warnings: unknown[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => warnings.push(args.join(" "));
    const stores = [createPetStore({ auth: [KEY] }), createPetStore({ auth: [KEY] })]; // basePath /v1
    const host = express();
    host.use("/shop", createNodeHandler(stores[0] as PetStore)); // meant: basePath "/shop/v1"
    host.use("/mall/v1", createNodeHandler(stores[1] as PetStore)); // meant: basePath "/mall/v1"
    const server = http.createServer(host);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      for (const path of ["/shop/other", "/shop/v1/pets", "/shop/v1/pets?limit=1", "/mall/v1/pets"]) {
        const res = await fetch(`${origin}${path}`, { headers: auth });
        assert.is(res.status, 404, path);
        assert.match(await res.text(), /Cannot GET \//, path);
      }
    } finally {
      console.warn = warn;
      server.close();
      server.closeAllConnections();
      for (const store of stores) await store.close();
    }
    assert.is(warnings.length, 2, "one warning per handler, none for a path outside the API");
    assert.match(
      String(warnings[0]),
      /\/shop\/v1\/pets reached the pet store .*set createPetStore\(\{ basePath: "\/shop\/v1" \}\)/,
    );
    assert.match(String(warnings[1]), /set createPetStore\(\{ basePath: "\/mall\/v1" \}\)/);
  });
}

test.run();
