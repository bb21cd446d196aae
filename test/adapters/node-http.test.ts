/**
 * The Node http adapter inside a host application: mounting under the base path, handing other
 * requests to a fallback or to `next`, and refusing bad options. The HTTP contract itself is
 * proven by the conformance suite (test/conformance).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import http from "node:http";
import { createRequest, createResponse } from "node-mocks-http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createNodeHandler } from "../../adapters/node-http.ts";
import type { AdapterStore } from "../../lib/adapter.ts";
import { createPetStore } from "../../lib/index.ts";

const KEY = "node-http-key";
const auth = { authorization: `Bearer ${KEY}` };

/** Serves `listener` on a free port for the duration of `run`. */
async function serve(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  run: (base: string) => Promise<void>,
): Promise<void> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const host = (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { "content-type": "text/plain" });
  res.end("host route");
};

test("node-http: in an existing server, requests outside the base path go to the fallback", async () => {
  const store = createPetStore({ auth: [KEY] });
  await serve(createNodeHandler(store, { fallback: host }), async (base) => {
    assert.is(await (await fetch(`${base}/`)).text(), "host route");
    assert.is(await (await fetch(`${base}/v1x/pets`)).text(), "host route", "/v1x is not under /v1");
    assert.is(await (await fetch(`${base}/assets/v1/pets`)).text(), "host route");
    const api = await fetch(`${base}/v1/pets`, { headers: auth });
    assert.is(api.status, 200);
    assert.is(await api.text(), "[]");
    const unknown = await fetch(`${base}/v1/unknown`, { headers: auth });
    assert.is(unknown.status, 404, "under the base path the API answers, even for unknown paths");
    assert.is(((await unknown.json()) as { code: string }).code, "not_found");
  });
  await store.close();
});

test("node-http: onResponse is called once a request with the status and the request id the answer carries", async () => {
  const store = createPetStore({ auth: [KEY] });
  const seen: { status: number; requestId: string; aborted: boolean; ms: number }[] = [];
  await serve(
    createNodeHandler(store, { onResponse: (_req, _res, answer) => void seen.push(answer) }),
    async (base) => {
      const traced = await fetch(`${base}/v1/pets`, { headers: { ...auth, "x-request-id": "trace-9" } });
      const created = await fetch(`${base}/v1/pets`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ name: "Rex", categoryId: 1 }),
      });
      const refused = await fetch(`${base}/v1/pets/1`);
      const answers = [traced, created, refused];
      assert.equal(
        answers.map((r) => r.status),
        [200, 201, 401],
      );
      assert.is(seen.length, 3, "one call a request");
      seen.forEach((call, i) => {
        const answer = answers[i] as Response;
        assert.is(call.status, answer.status);
        assert.is(call.requestId, answer.headers.get("x-request-id"), "the id the answer carries");
        assert.is(call.aborted, false);
        assert.ok(Number.isFinite(call.ms) && call.ms >= 0);
      });
      assert.is(seen[0]?.requestId, "trace-9", "a valid client id is the one reported");
    },
  );
  await store.close();
});

test("node-http: without a fallback, requests outside the base path get the contract's 404 not_found", async () => {
  const store = createPetStore({ auth: [KEY] });
  await serve(createNodeHandler(store), async (base) => {
    const res = await fetch(`${base}/elsewhere`);
    assert.is(res.status, 404);
    assert.is(res.headers.get("content-type"), "application/json; charset=utf-8");
    assert.is(((await res.json()) as { code: string }).code, "not_found");
  });
  await store.close();
});

test("node-http: as Connect/Express middleware, requests outside the base path go to next()", async () => {
  const store = createPetStore({ auth: [KEY] });
  const api = createNodeHandler(store);
  // A minimal middleware chain, as Connect and Express call it.
  const chain = (req: IncomingMessage, res: ServerResponse) => api(req, res, () => host(req, res));
  await serve(chain, async (base) => {
    assert.is(await (await fetch(`${base}/about`)).text(), "host route");
    assert.is((await fetch(`${base}/v1/pets`, { headers: auth })).status, 200);
  });
  await store.close();
});

test("node-http: when a framework rewrote req.url below a mount point, originalUrl is what counts", async () => {
  const store = createPetStore({ auth: [KEY] });
  const api = createNodeHandler(store);
  const mounted = (req: IncomingMessage, res: ServerResponse) => {
    // What Express does for app.use("/v1", api): req.url loses the mount path.
    Object.assign(req, { originalUrl: req.url, url: (req.url ?? "").replace(/^\/v1/, "") || "/" });
    api(req, res);
  };
  await serve(mounted, async (base) => {
    const res = await fetch(`${base}/v1/pets`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: '{"name":"Rex","categoryId":1}',
    });
    assert.is(res.status, 201);
    assert.is(res.headers.get("location"), "/v1/pets/1");
  });
  await store.close();
});

test("node-http: a store with a longer base path is served there, Location and Link included", async () => {
  const store = createPetStore({ auth: [KEY], basePath: "/api/pets-v1" });
  for (let i = 0; i < 3; i++) await store.createPet({ name: `p${i}`, categoryId: 1 });
  await serve(createNodeHandler(store, { fallback: host }), async (base) => {
    const page = await fetch(`${base}/api/pets-v1/pets?limit=2`, { headers: auth });
    assert.match(page.headers.get("link") ?? "", /^<\/api\/pets-v1\/pets\?limit=2&cursor=/);
    assert.is(await (await fetch(`${base}/v1/pets`)).text(), "host route");
  });
  await store.close();
});

test("node-http: the adapter adds no header of its own (no X-Powered-By, no Server)", async () => {
  const store = createPetStore({ auth: [KEY] });
  await serve(createNodeHandler(store), async (base) => {
    const res = await fetch(`${base}/v1/pets`, { headers: auth });
    const names = [...res.headers.keys()].sort();
    assert.equal(names, [
      "cache-control",
      "connection",
      "content-length",
      "content-type",
      "date",
      "etag",
      "keep-alive",
      "vary",
      "x-content-type-options",
      "x-request-id",
    ]);
  });
  await store.close();
});

test("node-http: an answer from memory storage is written before the listener returns; one that waits, later", async () => {
  const store = createPetStore({ auth: [KEY] });
  await store.createPet({ name: "Rex", categoryId: 1 });
  const listener = createNodeHandler(store);
  const res = createResponse();
  listener(createRequest({ method: "GET", url: "/v1/pets?limit=5", headers: auth }), res);
  assert.ok(res._isEndCalled(), "written in the same tick: no promise in between");
  assert.is(res.statusCode, 200);
  assert.equal(JSON.parse(res._getData()), [{ id: 1, name: "Rex", categoryId: 1, status: "available" }]);
  // An asynchronous verify function has to be waited for: the answer comes after.
  const waiting = createPetStore({ auth: async (token: string) => token === KEY });
  const later = createResponse();
  createNodeHandler(waiting)(createRequest({ method: "GET", url: "/v1/pets", headers: auth }), later);
  assert.not.ok(later._isEndCalled());
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(later._isEndCalled());
  assert.is(later.statusCode, 200);
});

test("node-http: a body that came with the headers reaches the store as bytes; one that comes later, through a reader", async () => {
  const store = createPetStore({ auth: [KEY] });
  const bodies: string[] = [];
  const watched: AdapterStore = {
    basePath: store.basePath,
    maxBodyBytes: store.maxBodyBytes,
    respond: (request) => {
      bodies.push(typeof request.body === "function" ? "reader" : (request.body?.constructor.name ?? "none"));
      return store.respond(request);
    },
  };
  await serve(createNodeHandler(watched), async (base) => {
    const posted = await fetch(`${base}/v1/pets`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: '{"name":"Rex","categoryId":1}',
    });
    assert.is(posted.status, 201, await posted.text());
    // Headers first, the body 100 ms later: it is not in when the store is asked.
    const { port } = new URL(base);
    const late = await new Promise<string>((resolve, reject) => {
      const body = '{"name":"Tom","categoryId":2}';
      const req = http.request({ port: Number(port), host: "127.0.0.1", method: "POST", path: "/v1/pets" }, (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve(`${res.statusCode} ${text}`));
      });
      req.on("error", reject);
      req.setHeader("authorization", auth.authorization);
      req.setHeader("content-type", "application/json");
      req.setHeader("content-length", String(body.length));
      req.flushHeaders();
      setTimeout(() => req.end(body), 100);
    });
    assert.ok(late.startsWith("201 "), late);
    const listed = await fetch(`${base}/v1/pets`, { headers: auth });
    assert.equal(
      ((await listed.json()) as { name: string }[]).map((pet) => pet.name),
      ["Rex", "Tom"],
    );
  });
  assert.equal(bodies, ["Buffer", "reader", "none"]);
});

test("node-http: createNodeHandler refuses what is not a store, and a fallback that is not a function", () => {
  assert.throws(() => createNodeHandler({} as never), /createPetStore/);
  const store = createPetStore({ auth: [KEY] });
  assert.throws(() => createNodeHandler(store, { fallback: "index.html" as never }), /fallback/);
});

test.run();
