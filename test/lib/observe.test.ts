/**
 * `createPetStore({ observe })`: one observation per answered request (method, route template,
 * status, duration, request id) and per storage call (operation, backend, duration, failed), from
 * any adapter with no adapter option; an observer never changes an answer, and without one the
 * memory fast path stays synchronous.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createNodeHandler } from "../../adapters/node-http.ts";
import { isPromise } from "../../lib/adapter.ts";
import type { Observation, RequestObservation, StorageObservation } from "../../lib/entries/observe.ts";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { memoryStorage } from "../../lib/entries/storage.ts";
import { AUTH, call, KEY, makeStore } from "../support/helpers.ts";

function recorder() {
  const seen: Observation[] = [];
  return {
    observe: (o: Observation) => void seen.push(o),
    requests: () => seen.filter((o): o is RequestObservation => o.kind === "request"),
    storage: () => seen.filter((o): o is StorageObservation => o.kind === "storage"),
  };
}

/** A memory storage whose calls wait `ms` (an async backend), and fail while `failing` is set. */
function slowStorage(ms: number) {
  const inner = memoryStorage();
  const state = { failing: false };
  const wait = async () => {
    await new Promise((r) => setTimeout(r, ms));
    if (state.failing) throw new Error("backend down");
  };
  const storage: PetStorage = {
    kind: "slow",
    create: (pet) => wait().then(() => inner.create(pet)),
    get: (id) => wait().then(() => inner.get(id)),
    list: (page) => wait().then(() => inner.list(page)),
    ping: async () => wait(),
    close: () => inner.close(),
  };
  return { storage, state };
}

test("observe: each answered request gives method, route template, status, duration and request id", async () => {
  const r = recorder();
  const store = makeStore({ observe: r.observe });
  await call(store, "POST", "/v1/pets", { body: '{"name":"Rex","categoryId":1}', headers: { "x-request-id": "c1" } });
  await call(store, "GET", "/v1/pets/1");
  await call(store, "GET", "/v1/pets/999");
  await call(store, "HEAD", "/v1/pets", { query: "limit=5" });
  await call(store, "GET", "/v1/pets", { auth: false });
  await call(store, "DELETE", "/v1/pets/1");
  await call(store, "GET", "/v1/openapi.json");
  const got = r.requests().map(({ method, route, status }) => ({ method, route, status }));
  assert.equal(got, [
    { method: "POST", route: "/v1/pets", status: 201 },
    { method: "GET", route: "/v1/pets/{petId}", status: 200 },
    { method: "GET", route: "/v1/pets/{petId}", status: 404 },
    { method: "HEAD", route: "/v1/pets", status: 200 },
    { method: "GET", route: "/v1/pets", status: 401 },
    { method: "DELETE", route: "/v1/pets/{petId}", status: 405 },
    { method: "GET", route: "/v1/openapi.json", status: 200 },
  ]);
  const first = r.requests()[0] as RequestObservation;
  assert.is(first.requestId, "c1");
  for (const o of r.requests()) assert.ok(o.durationMs >= 0 && Number.isFinite(o.durationMs), String(o.durationMs));
});

test("observe: a path no route matched has route undefined, never the raw path", async () => {
  const r = recorder();
  const store = makeStore({ observe: r.observe });
  await call(store, "GET", "/v1/secret-name/abc");
  await call(store, "GET", "/v1/pets/1/owner");
  assert.equal(
    r.requests().map((o) => [o.route, o.status]),
    [
      [undefined, 404],
      [undefined, 404],
    ],
  );
});

test("observe: the route template follows the base path", async () => {
  const r = recorder();
  const store = makeStore({ observe: r.observe, basePath: "/api/v2" });
  await call(store, "GET", "/api/v2/pets/7");
  assert.is(r.requests()[0]?.route, "/api/v2/pets/{petId}");
});

test("observe: each storage call gives operation, backend, duration and failed", async () => {
  const r = recorder();
  const store = makeStore({ observe: r.observe });
  await call(store, "POST", "/v1/pets", { body: '{"name":"Rex","categoryId":1}' });
  await call(store, "GET", "/v1/pets");
  await call(store, "GET", "/v1/pets/1");
  await store.ready();
  await store.createPet({ name: "In process", categoryId: 2 });
  assert.equal(
    r.storage().map(({ operation, backend, failed }) => ({ operation, backend, failed })),
    [
      { operation: "createPet", backend: "memory", failed: false },
      { operation: "listPets", backend: "memory", failed: false },
      { operation: "getPet", backend: "memory", failed: false },
      { operation: "ready", backend: "memory", failed: false },
      { operation: "createPet", backend: "memory", failed: false },
    ],
  );
});

test("observe: requests refused before the operation (401, 400) make no storage call", async () => {
  const r = recorder();
  const store = makeStore({ observe: r.observe });
  await call(store, "GET", "/v1/pets", { auth: false });
  await call(store, "GET", "/v1/pets", { query: "limit=0" });
  await call(store, "POST", "/v1/pets", { body: "{}" });
  assert.is(r.storage().length, 0);
  assert.is(r.requests().length, 3);
});

test("observe: a failing backend gives failed: true on the storage call and the 503 on the request", async () => {
  const r = recorder();
  const { storage, state } = slowStorage(1);
  const store = makeStore({ observe: r.observe, storage });
  state.failing = true;
  const answer = await call(store, "GET", "/v1/pets");
  assert.is(answer.status, 503);
  assert.is(await store.ready(), false);
  assert.equal(
    r.storage().map(({ operation, backend, failed }) => ({ operation, backend, failed })),
    [
      { operation: "listPets", backend: "slow", failed: true },
      { operation: "ready", backend: "slow", failed: true },
    ],
  );
  assert.is(r.requests()[0]?.status, 503);
});

test("observe: a request's duration runs until its promise settles (an async backend's wait is in it)", async () => {
  const r = recorder();
  const { storage } = slowStorage(60);
  const store = makeStore({ observe: r.observe, storage });
  await call(store, "GET", "/v1/pets");
  const request = r.requests()[0] as RequestObservation;
  const storageCall = r.storage()[0] as StorageObservation;
  // A lower bound set by the backend's own timer: no speed is asserted.
  assert.ok(storageCall.durationMs >= 50, `storage call ${storageCall.durationMs} ms`);
  assert.ok(request.durationMs >= storageCall.durationMs, `request ${request.durationMs} ms`);
});

test("observe: an observer that throws is reported to onError and the answer is unchanged", async () => {
  const errors: unknown[] = [];
  const plain = makeStore();
  const store = makeStore({
    observe: () => {
      throw new Error("observer broke");
    },
    onError: (e) => void errors.push(e),
  });
  const request = { method: "GET", path: "/v1/pets", headers: { authorization: AUTH, "x-request-id": "same" } };
  const expected = await plain.handle(request);
  const got = await store.handle(request);
  assert.equal(got, expected);
  await store.createPet({ name: "Rex", categoryId: 1 }); // the storage observation throws too
  assert.ok(errors.length >= 3, `${errors.length} errors reported`);
  assert.ok(errors.every((e) => (e as Error).message === "observer broke"));
});

test("observe: with memory storage respond() still answers without a promise (with or without an observer)", async () => {
  for (const observe of [undefined, () => {}]) {
    const store = makeStore(observe ? { observe } : {});
    await store.createPet({ name: "Rex", categoryId: 1 });
    const response = store.respond({ method: "GET", path: "/v1/pets/1", headers: { authorization: AUTH } });
    assert.not.ok(isPromise(response), observe ? "observed" : "not observed");
  }
});

test("observe: an adapter needs no option (the Node adapter's requests are observed by the store)", async () => {
  const r = recorder();
  const store = makeStore({ observe: r.observe });
  const server = http.createServer(createNodeHandler(store));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/v1/pets`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    assert.is(res.status, 201);
    assert.equal(
      r.requests().map((o) => [o.method, o.route, o.status]),
      [["POST", "/v1/pets", 201]],
    );
    assert.equal(
      r.storage().map((o) => o.operation),
      ["createPet"],
    );
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test("createPetStore: an observe that is not a function is refused with a TypeError", () => {
  assert.throws(() => makeStore({ observe: "yes" as never }), /observe must be a function/);
});

test.run();
