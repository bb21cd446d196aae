/**
 * adapters/msw.ts: petStoreHandlers in Node (msw/node's interceptor): every published conformance
 * case through `fetch` to the store's base URL, the base URL's forms and refusals, a test store's
 * kit (delay, request ids, failNext) behind the handlers, and a lost answer as a network error.
 */
import { setupServer } from "msw/node";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { petStoreHandlers } from "../../adapters/msw.ts";
import type { FetchTarget } from "../../conformance/index.ts";
import { conformanceCases } from "../../conformance/index.ts";
import type { AdapterStore } from "../../lib/adapter.ts";
import type { PetStoreRequest } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";
import { createTestStore } from "../../testing/index.ts";
import { CORS_ORIGIN } from "../support/conformance-origin.ts";
import { runEachCase } from "../support/run-cases.ts";

const KEY = "msw-key";
const AUTH = { authorization: `Bearer ${KEY}` };
const server = setupServer();
test.before(() => server.listen());
test.after.each(() => server.resetHandlers());
test.after(() => server.close());

const cases = conformanceCases();
test(`msw in Node: every published conformance case (${cases.length}) passes through fetch() to https://api.example/v1, answered by petStoreHandlers`, async () => {
  const target: FetchTarget = {
    basePath: "/v1",
    key: KEY,
    cors: { origin: CORS_ORIGIN },
    reset() {
      const store = createPetStore({ auth: [KEY], cors: { origins: [CORS_ORIGIN] } });
      server.resetHandlers(...petStoreHandlers(store, { baseUrl: "https://api.example/v1" }));
    },
    // The case's request, sent to the API's real URL: msw intercepts it as it would a front end's.
    // Transfer-Encoding is the client's own business (Node's fetch refuses to be given it; msw 3 runs it).
    fetch(request) {
      const headers = new Headers(request.headers);
      headers.delete("transfer-encoding");
      const url = request.url.replace("http://conformance.test", "https://api.example");
      return fetch(
        new Request(url, { method: request.method, headers, body: request.body, duplex: "half" } as RequestInit),
      );
    },
  };
  await runEachCase(cases, target);
});

test("msw: baseUrl may be absolute, end with a slash, or be a path (any origin in Node); the base path itself is the store's (404)", async () => {
  const store = createPetStore({ auth: [KEY], basePath: "/shop/v1" });
  await store.createPet({ name: "Rex", categoryId: 1 });
  for (const baseUrl of ["https://api.example/shop/v1/", "/shop/v1"]) {
    server.resetHandlers(...petStoreHandlers(store, { baseUrl }));
    const page = await fetch("https://api.example/shop/v1/pets/1", { headers: AUTH });
    assert.is(page.status, 200, baseUrl);
    assert.is(((await page.json()) as { name: string }).name, "Rex");
    assert.is((await fetch("https://api.example/shop/v1", { headers: AUTH })).status, 404, baseUrl);
  }
  server.resetHandlers(...petStoreHandlers(store)); // default: the store's base path
  assert.is((await fetch("http://localhost:5173/shop/v1/pets", { headers: AUTH })).status, 200);
  // Outside the base URL: not the store's (msw lets it through, to a port where nothing listens).
  let calls = 0;
  const counted = {
    ...store,
    respond(request: PetStoreRequest) {
      calls++;
      return store.respond(request);
    },
  };
  server.resetHandlers(...petStoreHandlers(counted, { baseUrl: "https://api.example/shop/v1" }));
  const outside = await fetch("http://127.0.0.1:9/other/pets").then(
    () => "answered",
    () => "network error",
  );
  assert.equal([outside, calls], ["network error", 0]);
});

test("msw: a baseUrl whose path is not the store's base path, an unknown option or a missing store are clear TypeErrors", () => {
  const store = createPetStore({ auth: [KEY] });
  assert.throws(() => petStoreHandlers(store, { baseUrl: "https://api.example/v2" }), /answers under \/v1/);
  assert.throws(() => petStoreHandlers(store, { baseUrl: "v1" }), /answers under \/v1/);
  assert.throws(() => petStoreHandlers(store, { baseUrl: "https://api.example/v1?x=1" }), /answers under \/v1/);
  assert.throws(() => petStoreHandlers(store, { baseUrl: "" }), /baseUrl must be a URL or a path/);
  assert.throws(() => petStoreHandlers(store, { baseURL: "/v1" } as never), /baseURL/);
  assert.throws(() => petStoreHandlers(undefined as never), /expected a store/);
});

test("msw: a test store behind the handlers answers with its kit: seeded pets, sequential request ids, delay, failNext, reset", async () => {
  const t = await createTestStore({ pets: 2, key: KEY, requestIds: "sequential" });
  server.resetHandlers(...petStoreHandlers(t, { baseUrl: "https://api.example/v1" }));
  const list = await fetch("https://api.example/v1/pets", { headers: AUTH });
  assert.equal(
    ((await list.json()) as { name: string }[]).map((p) => p.name),
    ["pet-1", "pet-2"],
  );
  assert.is(list.headers.get("x-request-id"), "req-1");
  t.failNext(1, { status: 503 });
  const failed = await fetch("https://api.example/v1/pets", { headers: AUTH });
  assert.equal([failed.status, failed.headers.get("retry-after")], [503, "1"]);
  t.delay(40);
  const started = performance.now();
  assert.is((await fetch("https://api.example/v1/pets/1", { headers: AUTH })).status, 200);
  assert.ok(performance.now() - started >= 35, "the answer waited for the kit's delay");
  await t.reset();
  const again = await fetch("https://api.example/v1/pets", { headers: AUTH });
  assert.is(again.headers.get("x-request-id"), "req-1", "reset starts the ids again");
  await t.close();
});

test("msw: a store whose answer is lost (it rejects, as the test kit's failNext does when it drops a connection) is a network error for fetch", async () => {
  const store: AdapterStore = {
    basePath: "/v1",
    maxBodyBytes: 1024,
    respond: () => Promise.reject(new TypeError("fetch failed")),
  };
  server.resetHandlers(...petStoreHandlers(store, { baseUrl: "https://api.example/v1" }));
  const error = await fetch("https://api.example/v1/pets").then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.instance(error, TypeError);
});

test.run();
