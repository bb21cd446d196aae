/**
 * The response check used by the conformance suite (test/support/openapi-validator.ts): the core's
 * answers conform to openapi.json, and an answer that breaks the document is caught.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { PetStorage } from "../../lib/entries/storage.ts";
import type { PetStoreResponse } from "../../lib/index.ts";
import { type Call, call, makeStore } from "../support/helpers.ts";
import { createResponseChecker, type ObservedExchange } from "../support/openapi-validator.ts";

const check = createResponseChecker();
const exchange = (method: string, path: string, res: PetStoreResponse): ObservedExchange => ({
  method,
  path,
  status: res.status,
  headers: res.headers,
  body: res.body,
});

const failingStorage: PetStorage = {
  kind: "broken",
  create: () => Promise.reject(new Error("down")),
  get: () => Promise.reject(new Error("down")),
  list: () => Promise.reject(new Error("down")),
  ping: () => Promise.reject(new Error("down")),
  close: () => Promise.resolve(),
};

const cases: [rule: string, method: string, path: string, c?: Call & { failing?: boolean }][] = [
  ["listPets 200 with Link", "GET", "/v1/pets?limit=1"],
  ["listPets 200 filtered", "GET", "/v1/pets?status=sold"],
  ["listPets HEAD 200", "HEAD", "/v1/pets"],
  ["listPets 400 invalid_query", "GET", "/v1/pets?limit=0"],
  ["listPets 401 missing key", "GET", "/v1/pets", { auth: false }],
  ["listPets 401 wrong key", "GET", "/v1/pets", { auth: false, headers: { authorization: "Bearer nope" } }],
  ["listPets 503", "GET", "/v1/pets", { failing: true }],
  ["createPet 201", "POST", "/v1/pets", { body: '{"name":"Rex","categoryId":3}' }],
  ["createPet 400 invalid_body with details", "POST", "/v1/pets", { body: '{"name":"Rex","categoryId":3,"id":1}' }],
  ["createPet 400 malformed_json", "POST", "/v1/pets", { body: "{" }],
  ["createPet 413", "POST", "/v1/pets", { body: `{"name":"${"x".repeat(70000)}","categoryId":1}` }],
  ["createPet 415", "POST", "/v1/pets", { body: "{}", headers: { "content-type": "text/plain" } }],
  ["createPet 503", "POST", "/v1/pets", { body: '{"name":"Rex","categoryId":3}', failing: true }],
  ["getPet 200", "GET", "/v1/pets/1"],
  ["getPet HEAD 200", "HEAD", "/v1/pets/1"],
  ["getPet 400", "GET", "/v1/pets/abc"],
  ["getPet 404", "GET", "/v1/pets/999"],
  ["getPet 401", "GET", "/v1/pets/999", { auth: false }],
  ["getPet 503", "GET", "/v1/pets/1", { failing: true }],
  ["404 not_found (trailing slash)", "GET", "/v1/pets/"],
  ["405 method_not_allowed", "DELETE", "/v1/pets/1"],
  ["405 on the collection", "PUT", "/v1/pets"],
];

for (const [rule, method, path, c = {}] of cases) {
  test(`openapi check: the core's answer "${rule}" conforms to openapi.json`, async () => {
    const store = makeStore(c.failing ? { storage: failingStorage, operationTimeoutMs: 200 } : {});
    if (!c.failing) {
      await store.createPet({ name: "Rex", categoryId: 1 });
      await store.createPet({ name: "Tom", categoryId: 2, status: "sold" });
    }
    const [p, q] = path.split("?");
    const res = await call(store, method, p as string, { ...c, query: q });
    assert.equal(check(exchange(method, path, res)), []);
    await store.close();
  });
}

const pet = { id: 1, name: "Rex", categoryId: 1, status: "available" };
const okHeaders = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  "x-request-id": "abc",
};
const broken: [rule: string, observed: ObservedExchange, expect: RegExp][] = [
  [
    "an undocumented status for the operation",
    { method: "GET", path: "/v1/pets", status: 404, headers: okHeaders, body: "{}" },
    /not documented/,
  ],
  [
    "a Pet with an extra field",
    { method: "GET", path: "/v1/pets", status: 200, headers: okHeaders, body: JSON.stringify([{ ...pet, extra: 1 }]) },
    /additional/,
  ],
  [
    "a Pet without status",
    {
      method: "POST",
      path: "/v1/pets",
      status: 201,
      headers: { ...okHeaders, location: "/v1/pets/1" },
      body: JSON.stringify({ id: 1, name: "Rex", categoryId: 1 }),
    },
    /status/,
  ],
  [
    "a 201 without Location",
    { method: "POST", path: "/v1/pets", status: 201, headers: okHeaders, body: JSON.stringify(pet) },
    /Location is required/,
  ],
  [
    "an answer without X-Request-Id",
    { method: "GET", path: "/v1/pets", status: 200, headers: { ...okHeaders, "x-request-id": undefined }, body: "[]" },
    /X-Request-Id is required/,
  ],
  [
    "Cache-Control other than no-store",
    {
      method: "GET",
      path: "/v1/pets",
      status: 200,
      headers: { ...okHeaders, "cache-control": "max-age=60" },
      body: "[]",
    },
    /Cache-Control/,
  ],
  [
    "an error whose code does not belong to the status",
    {
      method: "GET",
      path: "/v1/pets",
      status: 400,
      headers: okHeaders,
      body: JSON.stringify({ code: "invalid_body", message: "m", status: 400 }),
    },
    /code/,
  ],
  [
    "an error whose status field differs from the HTTP status",
    {
      method: "GET",
      path: "/v1/pets",
      status: 400,
      headers: okHeaders,
      body: JSON.stringify({ code: "invalid_query", message: "m", status: 401 }),
    },
    /status/,
  ],
  [
    "a 503 without Retry-After",
    {
      method: "GET",
      path: "/v1/pets",
      status: 503,
      headers: okHeaders,
      body: JSON.stringify({ code: "storage_unavailable", message: "m", status: 503 }),
    },
    /Retry-After is required/,
  ],
  [
    "a getPet 200 without the deprecation headers",
    { method: "GET", path: "/v1/pets/1", status: 200, headers: okHeaders, body: JSON.stringify(pet) },
    /Deprecation is required/,
  ],
  [
    "a wrong content type",
    {
      method: "GET",
      path: "/v1/pets",
      status: 200,
      headers: { ...okHeaders, "content-type": "text/html" },
      body: "[]",
    },
    /content-type/,
  ],
  [
    "a body that is not JSON",
    { method: "GET", path: "/v1/pets", status: 200, headers: okHeaders, body: "<html>" },
    /not JSON/,
  ],
  [
    "a HEAD answer with a body",
    { method: "HEAD", path: "/v1/pets", status: 200, headers: okHeaders, body: "[]" },
    /empty body/,
  ],
  [
    "a 200 to an unknown route",
    { method: "GET", path: "/v1/cats", status: 200, headers: okHeaders, body: "[]" },
    /expected 404/,
  ],
  [
    "a 405 without Allow",
    {
      method: "DELETE",
      path: "/v1/pets",
      status: 405,
      headers: okHeaders,
      body: JSON.stringify({ code: "method_not_allowed", message: "m", status: 405 }),
    },
    /Allow is required/,
  ],
];

for (const [rule, observed, expect] of broken) {
  test(`openapi check: ${rule} is reported as breaking the document`, () => {
    const problems = check(observed);
    assert.ok(problems.length > 0, "no problem reported");
    assert.match(problems.join("\n"), expect);
  });
}

test("openapi check: answers outside the base path (e.g. /healthz) are not the document's business", () => {
  assert.equal(check({ method: "GET", path: "/healthz", status: 200, headers: {}, body: "ok" }), []);
});

test("openapi check: a custom base path is honoured", async () => {
  const store = makeStore({ basePath: "/api" });
  const res = await call(store, "GET", "/api/pets");
  assert.equal(check(exchange("GET", "/api/pets", res), { basePath: "/api" }), []);
  const stray = await call(store, "GET", "/api/cats");
  assert.equal(check(exchange("GET", "/api/cats", stray), { basePath: "/api" }), []);
  await store.close();
});

test.run();
