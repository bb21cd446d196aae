/** The HTTP contract of handle(): routing, order of checks, auth, content checks and headers. */

import { test } from "uvu";
import * as assert from "uvu/assert";
import type { BodyReader } from "../../lib/adapter.ts";
import { REQUEST_HEADERS } from "../../lib/adapter.ts";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { createPetStore, ERRORS, isPetStoreError, PetStoreError } from "../../lib/index.ts";
import { AUTH, call, errorOf, json, KEY, makeStore } from "../support/helpers.ts";
import { recordSpans, registerContext } from "../support/tracing.ts";

const CHALLENGE = 'Bearer realm="petstore"';
const INVALID = 'Bearer realm="petstore", error="invalid_token"';

// ---- routing ----------------------------------------------------------------------------

for (const path of [
  "/",
  "/v1",
  "/v1/",
  "/v1/nope",
  "/v2/pets",
  "/v1/pets/",
  "/v1/pets/1/x",
  "/V1/PETS",
  "/v1/pets//1",
]) {
  test(`routing: unknown path ${path} gives 404 not_found (before auth)`, async () => {
    const res = await call(makeStore(), "GET", path, { auth: false });
    assert.is(res.status, 404);
    assert.is(errorOf(res).code, "not_found");
    assert.is(res.headers["www-authenticate"], undefined);
  });
}

test("routing: /v1/pets/ (trailing slash) is not /v1/pets", async () => {
  const res = await call(makeStore(), "GET", "/v1/pets/");
  assert.is(res.status, 404);
  assert.is(errorOf(res).code, "not_found");
});

for (const [method, path, allow] of [
  ["PUT", "/v1/pets", "GET, HEAD, POST"],
  ["DELETE", "/v1/pets", "GET, HEAD, POST"],
  ["PATCH", "/v1/pets", "GET, HEAD, POST"],
  ["OPTIONS", "/v1/pets", "GET, HEAD, POST"],
  ["POST", "/v1/pets/1", "GET, HEAD"],
  ["DELETE", "/v1/pets/1", "GET, HEAD"],
  ["PUT", "/v1/pets/abc", "GET, HEAD"],
] as const) {
  test(`routing: ${method} ${path} gives 405 method_not_allowed with Allow: ${allow}, even without a key`, async () => {
    const res = await call(makeStore(), method, path, { auth: false });
    assert.is(res.status, 405);
    assert.is(errorOf(res).code, "method_not_allowed");
    assert.is(res.headers.allow, allow);
  });
}

test("routing: HEAD is accepted wherever GET is, with GET's headers and no body", async () => {
  const store = makeStore();
  await store.createPet({ name: "Rex", categoryId: 1 });
  for (const path of ["/v1/pets", "/v1/pets/1"]) {
    const get = await call(store, "GET", path);
    const head = await call(store, "HEAD", path);
    assert.is(head.status, 200);
    assert.is(head.body, "");
    assert.is(head.headers["content-length"], get.headers["content-length"]);
    assert.is(head.headers["content-type"], get.headers["content-type"]);
  }
  const missing = await call(store, "HEAD", "/v1/pets/99");
  assert.is(missing.status, 404);
  assert.is(missing.body, "");
});

test("routing: the base path is configurable and nothing answers under the default one then", async () => {
  const store = makeStore({ basePath: "/api/petstore" });
  assert.is((await call(store, "GET", "/api/petstore/pets")).status, 200);
  assert.is((await call(store, "GET", "/v1/pets")).status, 404);
});

test("createPetStore: a malformed base path is refused at creation", () => {
  assert.throws(() => makeStore({ basePath: "v1" }), /basePath/);
  assert.throws(() => makeStore({ basePath: "/v1/" }), /basePath/);
});

// ---- authentication ---------------------------------------------------------------------

test("auth: a missing Authorization header gives 401 unauthorized with WWW-Authenticate: Bearer realm", async () => {
  const res = await call(makeStore(), "GET", "/v1/pets", { auth: false });
  assert.is(res.status, 401);
  assert.is(errorOf(res).code, "unauthorized");
  assert.is(res.headers["www-authenticate"], CHALLENGE);
});

for (const [label, value] of [
  ["Bearer (no token)", "Bearer"],
  ["Bearer  (empty token)", "Bearer "],
  ["Basic x (wrong scheme)", "Basic x"],
  ["a wrong key", "Bearer wrong-key"],
  ["the key without a scheme", KEY],
  ["a key with a suffix", `Bearer ${KEY}x`],
  ["a prefix of the key", `Bearer ${KEY.slice(0, -1)}`],
  ["10 KB of junk", `Bearer ${"x".repeat(10_000)}`],
] as const) {
  test(`auth: Authorization ${label} gives 401 with error="invalid_token"`, async () => {
    const res = await call(makeStore(), "GET", "/v1/pets", { auth: false, headers: { authorization: value } });
    assert.is(res.status, 401);
    assert.is(errorOf(res).code, "unauthorized");
    assert.is(res.headers["www-authenticate"], INVALID);
    assert.not.ok(res.body.includes(KEY), "the key never appears in a response");
  });
}

for (const value of [`bearer ${KEY}`, `BEARER ${KEY}`, `Bearer ${KEY}`]) {
  test(`auth: the scheme name is case-insensitive (${value.split(" ")[0]})`, async () => {
    const res = await call(makeStore(), "GET", "/v1/pets", { auth: false, headers: { authorization: value } });
    assert.is(res.status, 200);
  });
}

const REPEATED = 'Bearer realm="petstore", error="invalid_request"';

for (const [label, value] of [
  ["twice (a list)", [AUTH, AUTH]],
  ["twice with different keys (a list)", [AUTH, "Bearer other"]],
  ["twice, the second another scheme (a list)", [AUTH, "Basic dXNlcjpwYXNz"]],
  ["twice joined with a comma, as Web Headers join them", `${AUTH}, ${AUTH}`],
  ["joined with a comma, Basic first", `Basic dXNlcjpwYXNz, ${AUTH}`],
  ["with a comma in the token", `${AUTH},x`],
] as const) {
  test(`auth: Authorization given ${label} is refused with 400 invalid_request and error="invalid_request", on every route, before the body is read`, async () => {
    const store = makeStore();
    let read = false;
    const body = async () => {
      read = true;
      return '{"name":"Rex","categoryId":1}';
    };
    for (const [method, path] of [
      ["GET", "/v1/pets"],
      ["HEAD", "/v1/pets"],
      ["POST", "/v1/pets"],
      ["GET", "/v1/pets/1"],
    ]) {
      const res = await store.handle({
        method: method as string,
        path: path as string,
        headers: { authorization: value as string | string[], "content-type": "application/json" },
        body,
      });
      assert.is(res.status, 400, `${method} ${path}`);
      assert.is(res.headers["www-authenticate"], REPEATED);
      if (method !== "HEAD") {
        const error = errorOf(res);
        assert.is(error.code, "invalid_request");
        assert.is(error.message, ERRORS.invalid_request.message);
      }
      if (path === "/v1/pets/1") assert.is(res.headers.deprecation, "@1795564800", "the route's own headers too");
      assert.not.ok(res.body.includes(KEY), "the key never appears in a response");
    }
    assert.not.ok(read, "the body was never read");
    assert.equal((await store.listPets()).pets, [], "nothing was stored");
  });
}

for (const [label, value] of [
  ["a single Digest header (commas between its parameters)", 'Digest username="u", realm="petstore", nonce="n"'],
  ["a list of one", [AUTH]],
] as [string, string | string[]][]) {
  test(`auth: Authorization as ${label} is given once, not refused as repeated`, async () => {
    const res = await call(makeStore(), "GET", "/v1/pets", { auth: false, headers: { authorization: value } });
    assert.is.not(res.status, 400, res.body);
  });
}

test("auth: a key in the query string is never accepted", async () => {
  for (const query of [`api_key=${KEY}`, `access_token=${KEY}`, `key=${KEY}`]) {
    const res = await call(makeStore(), "GET", "/v1/pets", { auth: false, query });
    assert.is(res.status, 401);
  }
});

test("auth: a missing key for GET /v1/pets/999999 gets 401, never 404", async () => {
  const res = await call(makeStore(), "GET", "/v1/pets/999999", { auth: false });
  assert.is(res.status, 401);
});

test("auth comes before content checks: POST without a key and a bad type/size/body gets 401", async () => {
  let read = false;
  const store = makeStore();
  for (const headers of [{ "content-type": "text/plain" }, { "content-length": "999999999" }, {}]) {
    const res = await store.handle({
      method: "POST",
      path: "/v1/pets",
      headers: { "content-type": "application/json", ...headers },
      body: async () => {
        read = true;
        return "{";
      },
    });
    assert.is(res.status, 401);
  }
  assert.not.ok(read, "the body was never read before authentication");
});

test("auth: a custom verify function decides (sync and async)", async () => {
  const sync = createPetStore({ auth: (token) => token === "alpha", onError: () => {} });
  const async_ = createPetStore({ auth: { verify: async (token) => token === "beta" }, onError: () => {} });
  const get = (s: typeof sync, token: string) =>
    s.handle({ method: "GET", path: "/v1/pets", headers: { authorization: `Bearer ${token}` } });
  assert.is((await get(sync, "alpha")).status, 200);
  assert.is((await get(sync, "beta")).status, 401);
  assert.is((await get(async_, "beta")).status, 200);
  assert.is((await get(async_, "alpha")).status, 401);
});

test("auth: apiKeys accepts any of several keys; { keys } works too", async () => {
  const store = createPetStore({ auth: { keys: ["one", "two"] } });
  for (const [token, status] of [
    ["one", 200],
    ["two", 200],
    ["three", 401],
  ] as const) {
    const res = await store.handle({ method: "GET", path: "/v1/pets", headers: { authorization: `Bearer ${token}` } });
    assert.is(res.status, status, token);
  }
});

test("auth: createPetStore without auth, or with an empty key list, refuses to start (never runs open)", () => {
  assert.throws(() => createPetStore({} as never), /auth/);
  assert.throws(() => createPetStore({ auth: [] }), /non-empty/);
  assert.throws(() => createPetStore({ auth: [""] }), /non-empty/);
});

test("auth: a verify function that throws gives 500 internal_error, reported to onError", async () => {
  const errors: unknown[] = [];
  const store = createPetStore({
    auth: () => {
      throw new Error("secret internal detail");
    },
    onError: (e) => errors.push(e),
  });
  const res = await store.handle({ method: "GET", path: "/v1/pets", headers: { authorization: "Bearer x" } });
  assert.is(res.status, 500);
  assert.is(errorOf(res).code, "internal_error");
  assert.not.ok(res.body.includes("secret internal detail"));
  assert.is(errors.length, 1);
});

// ---- content checks ---------------------------------------------------------------------

for (const type of [
  undefined,
  "text/plain",
  "application/x-www-form-urlencoded",
  "application/jsonx",
  "multipart/form-data",
]) {
  test(`content type: POST with Content-Type ${type ?? "(none)"} gives 415 unsupported_media_type`, async () => {
    const res = await call(makeStore(), "POST", "/v1/pets", {
      headers: { "content-type": type },
      body: '{"name":"Rex","categoryId":1}',
    });
    assert.is(res.status, 415);
    assert.is(errorOf(res).code, "unsupported_media_type");
  });
}

for (const type of ["application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8"]) {
  test(`content type: ${type} is accepted (parameters are fine)`, async () => {
    const res = await call(makeStore(), "POST", "/v1/pets", {
      headers: { "content-type": type },
      body: '{"name":"Rex","categoryId":1}',
    });
    assert.is(res.status, 201);
  });
}

test("content type is checked before size and syntax (415 before 413 and 400)", async () => {
  const res = await call(makeStore(), "POST", "/v1/pets", {
    headers: { "content-type": "text/plain", "content-length": "999999" },
    body: "{",
  });
  assert.is(res.status, 415);
});

test("size: a Content-Length over the limit gives 413 payload_too_large without reading the body", async () => {
  let read = false;
  const res = await makeStore().handle({
    method: "POST",
    path: "/v1/pets",
    headers: { authorization: AUTH, "content-type": "application/json", "content-length": String(64 * 1024 + 1) },
    body: async () => {
      read = true;
      return "{}";
    },
  });
  assert.is(res.status, 413);
  assert.is(errorOf(res).code, "payload_too_large");
  assert.not.ok(read);
});

test("size: a 65 KiB body gives 413 payload_too_large", async () => {
  const body = JSON.stringify({ name: "x", categoryId: 1, pad: "y".repeat(65 * 1024) });
  const asText = await call(makeStore(), "POST", "/v1/pets", { body });
  const asBytes = await call(makeStore(), "POST", "/v1/pets", { body: new TextEncoder().encode(body) });
  assert.is(asText.status, 413);
  assert.is(asBytes.status, 413);
});

test("size: the body reader is given the limit, and its payload_too_large answers 413", async () => {
  let given = 0;
  const res = await makeStore({ maxBodyBytes: 1000 }).handle({
    method: "POST",
    path: "/v1/pets",
    headers: { authorization: AUTH, "content-type": "application/json" },
    body: async (limit) => {
      given = limit;
      throw new PetStoreError("payload_too_large");
    },
  });
  assert.is(given, 1000);
  assert.is(res.status, 413);
});

test("size: the limit is configurable (maxBodyBytes)", async () => {
  const store = makeStore({ maxBodyBytes: 40 });
  assert.is((await call(store, "POST", "/v1/pets", { body: '{"name":"Rex","categoryId":1}' })).status, 201);
  assert.is(
    (await call(store, "POST", "/v1/pets", { body: JSON.stringify({ name: "R".repeat(40), categoryId: 1 }) })).status,
    413,
  );
});

for (const [label, body] of [
  ["truncated JSON", '{"name":"Rex","categoryId":'],
  ["a trailing comma", '{"name":"Rex","categoryId":1,}'],
  ["single quotes", "{'name':'Rex'}"],
  ["invalid UTF-8", new Uint8Array([0x7b, 0x22, 0x6e, 0xff, 0xfe, 0x22, 0x7d])],
  ["two JSON values", '{"name":"Rex","categoryId":1}{}'],
] as const) {
  test(`syntax: ${label} gives 400 malformed_json`, async () => {
    const res = await call(makeStore(), "POST", "/v1/pets", { body });
    assert.is(res.status, 400);
    assert.is(errorOf(res).code, "malformed_json");
  });
}

test("syntax: deeply nested JSON (30,000 levels) is answered with 400, not a crash", async () => {
  const body = `${"[".repeat(30_000)}${"]".repeat(30_000)}`;
  const res = await call(makeStore(), "POST", "/v1/pets", { body });
  assert.is(res.status, 400);
  const nested = `{"name":${"[".repeat(30_000)}${"]".repeat(30_000)},"categoryId":1}`;
  assert.is((await call(makeStore(), "POST", "/v1/pets", { body: nested })).status, 400);
});

// ---- getPet ------------------------------------------------------------------------------

const DEPRECATION = {
  deprecation: "@1795564800",
  sunset: "Thu, 05 Dec 2030 00:00:00 GMT",
  link: '</v1/pets>; rel="successor-version"',
};

function assertDeprecationHeaders(headers: Record<string, string>) {
  assert.is(headers.deprecation, DEPRECATION.deprecation);
  assert.is(headers.sunset, DEPRECATION.sunset);
  assert.is(headers.link, DEPRECATION.link);
}

test("getPet: 200 with the Pet and the Deprecation, Sunset and successor-version Link headers", async () => {
  const store = makeStore();
  const pet = await store.createPet({ name: "Rex", categoryId: 4, status: "pending" });
  const res = await call(store, "GET", `/v1/pets/${pet.id}`);
  assert.is(res.status, 200);
  assert.equal(json(res), { id: pet.id, name: "Rex", categoryId: 4, status: "pending" });
  assert.equal(Object.keys(json(res) as object), ["id", "name", "categoryId", "status"]);
  assertDeprecationHeaders(res.headers);
});

test("getPet: an unknown id gives 404 pet_not_found with the deprecation headers", async () => {
  const res = await call(makeStore(), "GET", "/v1/pets/999999");
  assert.is(res.status, 404);
  assert.is(errorOf(res).code, "pet_not_found");
  assertDeprecationHeaders(res.headers);
});

for (const id of ["0", "abc", "1.0", "-1", "12345678901234567890", "9007199254740992", "1e3", "%20", "0x10"]) {
  test(`getPet: petId ${id} gives 400 invalid_pet_id with the deprecation headers`, async () => {
    const res = await call(makeStore(), "GET", `/v1/pets/${id}`);
    assert.is(res.status, 400);
    assert.is(errorOf(res).code, "invalid_pet_id");
    assertDeprecationHeaders(res.headers);
  });
}

test("getPet(): plain function refuses bad ids with invalid_pet_id and unknown ones with pet_not_found", async () => {
  const store = makeStore();
  for (const id of [0, -1, 1.5, Number.NaN, 2 ** 53, "abc", "1.0", ""]) {
    await store.getPet(id).then(
      () => assert.unreachable(String(id)),
      (e) => assert.is(e.code, "invalid_pet_id", String(id)),
    );
  }
  await store.getPet(9007199254740991).then(
    () => assert.unreachable(),
    (e) => assert.is(e.code, "pet_not_found"),
  );
  const pet = await store.createPet({ name: "Rex", categoryId: 1 });
  assert.equal(await store.getPet(String(pet.id)), pet);
});

test("getPet: the Deprecation date and the Sunset are configurable", async () => {
  const store = makeStore({
    deprecatedAt: new Date("2027-01-01T00:00:00Z"),
    sunsetAt: new Date("2031-01-01T00:00:00Z"),
  });
  const res = await call(store, "GET", "/v1/pets/1");
  assert.is(res.headers.deprecation, "@1798761600");
  assert.is(res.headers.sunset, "Wed, 01 Jan 2031 00:00:00 GMT");
});

// ---- every response ----------------------------------------------------------------------

async function sampleResponses() {
  const store = makeStore();
  await store.createPet({ name: "Rex", categoryId: 1 });
  return Promise.all([
    call(store, "GET", "/v1/pets"),
    call(store, "GET", "/v1/pets/1"),
    call(store, "POST", "/v1/pets", { body: '{"name":"Rex","categoryId":1}' }),
    call(store, "GET", "/v1/pets/2000"),
    call(store, "GET", "/v1/pets", { auth: false }),
    call(store, "GET", "/nope"),
    call(store, "DELETE", "/v1/pets"),
    call(store, "POST", "/v1/pets", { body: "{" }),
    call(store, "POST", "/v1/pets", { body: "{}", headers: { "content-type": "text/plain" } }),
  ]);
}

test("every response: Content-Type application/json; charset=utf-8", async () => {
  for (const res of await sampleResponses()) assert.is(res.headers["content-type"], "application/json; charset=utf-8");
});

test("every response: Cache-Control: private, no-cache on a caller's 2xx (browsers keep and revalidate), no-store on errors", async () => {
  for (const res of await sampleResponses()) {
    const expected = res.status < 300 ? "private, no-cache" : "no-store";
    assert.is(res.headers["cache-control"], expected, `${res.status}`);
  }
});

test("every response: no X-Powered-By or framework banner", async () => {
  for (const res of await sampleResponses()) {
    assert.is(res.headers["x-powered-by"], undefined);
    assert.is(res.headers.server, undefined);
  }
});

test("every response: content-length is the byte length of the body, and the body is exact JSON, whatever the names", async () => {
  // The serialiser counts bytes as it writes (ASCII names need no second pass): every kind of
  // character a name can hold, alone and mixed in one page, must still give the exact length.
  const names = [
    "Rex",
    "Ünïcødé 🐶",
    'quote " and backslash \\',
    "tab\tnew\nline\u0001",
    "lone \ud800 surrogate",
    "end \udfff",
    "~ del \u007f and nbsp \u00a0",
    "\u2028 line separator",
    "日本語の名前",
    "𝔘𝔫𝔦",
  ];
  const store = makeStore();
  for (const name of names) await store.createPet({ name, categoryId: 1 });
  const pages = [await call(store, "GET", "/v1/pets", { query: "limit=100" })];
  for (let id = 1; id <= names.length; id++) pages.push(await call(store, "GET", `/v1/pets/${id}`));
  pages.push(await call(store, "GET", "/v1/pets", { query: "limit=1" })); // ASCII only
  // Again: the memory storage's pets are now served from their cached text, which must match.
  const again = await call(store, "GET", "/v1/pets", { query: "limit=100" });
  assert.is(again.body, pages[0]?.body);
  assert.is(again.headers["content-length"], pages[0]?.headers["content-length"]);
  for (const res of pages) {
    assert.is(res.status, 200);
    assert.is(res.headers["content-length"], String(Buffer.byteLength(res.body)), res.body);
  }
  const listed = json(pages[0] as never) as { id: number; name: string; categoryId: number; status: string }[];
  assert.equal(
    listed.map((p) => p.name),
    names,
  );
  for (const pet of listed) {
    assert.is(JSON.stringify(pet), JSON.stringify({ id: pet.id, name: pet.name, categoryId: 1, status: "available" }));
  }
  assert.is(pages[0]?.body, JSON.stringify(listed), "the same text JSON.stringify gives");
});

test("every error: the Error body has code, message, status equal to the HTTP status", async () => {
  for (const res of await sampleResponses()) {
    if (res.status < 400) continue;
    const body = errorOf(res);
    assert.is(body.status, res.status);
    assert.ok(body.code in ERRORS);
  }
});

test("X-Request-Id: a valid client value (1-128 of [A-Za-z0-9._-]) is echoed", async () => {
  for (const id of ["a", "req-1.2_3", "x".repeat(128)]) {
    const res = await call(makeStore(), "GET", "/v1/pets", { headers: { "x-request-id": id } });
    assert.is(res.headers["x-request-id"], id);
  }
});

test("X-Request-Id: each character is accepted exactly when it is one of [A-Za-z0-9._-]", async () => {
  const store = makeStore();
  const codes = [...Array.from({ length: 256 }, (_, c) => c), 0x2028, 0xff0e, 0xd800];
  for (const code of codes) {
    const id = `a${String.fromCharCode(code)}z`;
    const res = await store.handle({ method: "GET", path: "/v1/nope", headers: { "x-request-id": id } });
    const expected = /^[A-Za-z0-9._-]+$/.test(id);
    assert.is(res.headers["x-request-id"] === id, expected, `U+${code.toString(16).padStart(4, "0")}`);
  }
});

test("X-Request-Id: an invalid client value is replaced by a new random id", async () => {
  const seen = new Set<string>();
  for (const id of ["", "x".repeat(129), "has space", "semi;colon", "ünï"]) {
    const res = await call(makeStore(), "GET", "/v1/pets", { headers: { "x-request-id": id } });
    const got = res.headers["x-request-id"] as string;
    assert.is.not(got, id);
    assert.match(got, /^[A-Za-z0-9._-]{1,128}$/);
    seen.add(got);
  }
  const none = await call(makeStore(), "GET", "/v1/pets");
  assert.match(none.headers["x-request-id"] as string, /^[A-Za-z0-9._-]{1,128}$/);
  assert.is(seen.size, 5, "ids are random");
});

// ---- failures of the storage ------------------------------------------------------------

function brokenStorage(fail: () => Promise<never>): PetStorage {
  return { kind: "broken", create: fail, get: fail, list: fail, ping: fail, close: async () => {} };
}

test("storage failure: a rejecting backend gives 503 storage_unavailable with Retry-After: 1", async () => {
  const store = makeStore({ storage: brokenStorage(() => Promise.reject(new Error("ECONNREFUSED 10.0.0.1:6379"))) });
  for (const res of [
    await call(store, "GET", "/v1/pets"),
    await call(store, "GET", "/v1/pets/1"),
    await call(store, "POST", "/v1/pets", { body: '{"name":"Rex","categoryId":1}' }),
  ]) {
    assert.is(res.status, 503);
    assert.is(errorOf(res).code, "storage_unavailable");
    assert.is(res.headers["retry-after"], "1");
    assert.not.ok(res.body.includes("ECONNREFUSED"), "no dependency message reaches the client");
  }
  assert.is(await store.ready(), false);
});

test("storage failure: a backend that never answers gives 503 within the operation time-out", async () => {
  const store = makeStore({ storage: brokenStorage(() => new Promise<never>(() => {})), operationTimeoutMs: 50 });
  const res = await call(store, "GET", "/v1/pets");
  assert.is(res.status, 503);
  await store.createPet({ name: "Rex", categoryId: 1 }).then(
    () => assert.unreachable(),
    (e) => assert.is(e.code, "storage_unavailable"),
  );
});

test("storage failure: an invalid stored value reported by the backend is 500 internal_error, logged", async () => {
  const errors: unknown[] = [];
  const store = makeStore({
    storage: brokenStorage(() =>
      Promise.reject(new PetStoreError("internal_error", "stored value for pet 1 is not a Pet")),
    ),
    onError: (e) => errors.push(e),
  });
  const res = await call(store, "GET", "/v1/pets/1");
  assert.is(res.status, 500);
  assert.is(errorOf(res).code, "internal_error");
  assert.is(errors.length, 1);
});

test("handle() resolves, never rejects, for every failure after a wait: body reader, storage, verify, onError", async () => {
  const errors: unknown[] = [];
  const onError = (e: unknown) => void errors.push(e);
  const body = async () => '{"name":"Rex","categoryId":1}';
  // Each body comes through a reader, as adapters send it.
  const cases: [string, ReturnType<typeof makeStore>, BodyReader, number, string][] = [
    [
      "a reader that rejects with a plain Error",
      makeStore({ onError }),
      () => Promise.reject(new TypeError("socket")),
      500,
      "internal_error",
    ],
    [
      "a reader that throws",
      makeStore({ onError }),
      () => {
        throw new Error("sync");
      },
      500,
      "internal_error",
    ],
    [
      "a reader refusing the size",
      makeStore({ onError }),
      () => Promise.reject(new PetStoreError("payload_too_large")),
      413,
      "payload_too_large",
    ],
    [
      "storage that rejects",
      makeStore({ onError, storage: brokenStorage(() => Promise.reject(new Error("down"))) }),
      body,
      503,
      "storage_unavailable",
    ],
    [
      "storage that reports a bad value",
      makeStore({ onError, storage: brokenStorage(() => Promise.reject(new PetStoreError("internal_error"))) }),
      body,
      500,
      "internal_error",
    ],
    [
      "an async verify that rejects",
      makeStore({
        onError,
        auth: async () => {
          throw new Error("idp down");
        },
      }),
      body,
      500,
      "internal_error",
    ],
    [
      "onError that throws",
      makeStore({
        onError: () => {
          throw new Error("logger down");
        },
        storage: brokenStorage(() => Promise.reject(new PetStoreError("internal_error"))),
      }),
      body,
      500,
      "internal_error",
    ],
  ];
  for (const [name, store, read, status, code] of cases) {
    const res = await call(store, "POST", "/v1/pets", { body: read });
    assert.is(res.status, status, name);
    assert.is(errorOf(res).code, code, name);
  }
  assert.is(errors.length, 5, "every 500 but the one whose onError throws is reported once, and the outage");
  assert.is(errors.filter((e) => isPetStoreError(e, "storage_unavailable")).length, 1, "the outage");
});

test("handle() never rejects: hostile request objects resolve to a response", async () => {
  const store = makeStore();
  const hostile = [
    null,
    {},
    { method: "GET" },
    { method: "GET", path: "/v1/pets" },
    { method: 5, path: {}, headers: [] },
    { method: "GET", path: "/v1/pets", headers: { authorization: ["a", "b"] } },
    {
      method: "POST",
      path: "/v1/pets",
      headers: { authorization: AUTH, "content-type": "application/json" },
      body: 42,
    },
  ];
  for (const request of hostile) {
    const res = await store.handle(request as never);
    assert.type(res.status, "number");
    assert.ok([400, 401, 404, 500].includes(res.status), `${JSON.stringify(request)} -> ${res.status}`);
    errorOf(res);
  }
});

test("close(): closes the storage once, however often it is called", async () => {
  let closed = 0;
  const storage: PetStorage = {
    ...brokenStorage(() => Promise.reject(new Error("x"))),
    close: async () => {
      closed++;
    },
  };
  const store = makeStore({ storage });
  await Promise.all([store.close(), store.close()]);
  await store.close();
  assert.is(closed, 1);
});

test("REQUEST_HEADERS lists every header the core reads, on every route and refusal, CORS and traces included", async () => {
  // Spans recorded, under the W3C propagator: the trace context headers are read too.
  const unregister = registerContext();
  const { provider } = recordSpans();
  const store = createPetStore({
    auth: { keys: [KEY], trustProxy: true },
    cors: { origins: ["https://shop.example"] },
    tracerProvider: provider,
  });
  const read = new Set<string>();
  // Headers that record each name the core looks up (a header absent here reads as undefined).
  const watched = (headers: Record<string, string>) =>
    new Proxy(headers, {
      get(target, name) {
        if (typeof name === "string") read.add(name);
        return Reflect.get(target, name);
      },
    });
  const body = JSON.stringify({ name: "Rex", categoryId: 1 });
  const requests: [string, string, Record<string, string>, string?][] = [
    ["GET", "/v1/pets", { authorization: AUTH, "x-request-id": "abc" }],
    [
      "GET",
      "/v1/pets",
      { authorization: AUTH, traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
    ],
    ["GET", "/v1/pets?status=sold&limit=2", { authorization: AUTH }],
    ["HEAD", "/v1/pets/1", { authorization: AUTH }],
    ["GET", "/v1/pets/999", { authorization: AUTH }],
    ["GET", "/v1/pets/x", { authorization: AUTH }],
    ["GET", "/v1/pets", {}],
    ["GET", "/v1/pets", { authorization: "Bearer not-the-key", "x-forwarded-for": "203.0.113.9" }],
    ["PUT", "/v1/pets", { authorization: AUTH }],
    ["GET", "/v1/openapi.json", {}],
    ["OPTIONS", "/v1/pets", { origin: "https://shop.example", "access-control-request-method": "POST" }],
    ["GET", "/v1/pets", { origin: "https://other.example", authorization: AUTH }],
    [
      "POST",
      "/v1/pets",
      { authorization: AUTH, "content-type": "application/json", "content-length": `${body.length}` },
      body,
    ],
    ["POST", "/v1/pets", { authorization: AUTH, "content-type": "application/json", "idempotency-key": "k-1" }, body],
    ["POST", "/v1/pets", { authorization: AUTH, "content-type": "text/plain" }, body],
    [
      "POST",
      "/v1/pets",
      { authorization: AUTH, "content-type": "application/json", "content-length": "99999999" },
      body,
    ],
  ];
  for (const [method, target, headers, text] of requests) {
    const [path, query] = target.split("?") as [string, string?];
    const res = await store.handle({ method, path, query, headers: watched(headers), body: text });
    assert.type(res.status, "number");
  }
  unregister();
  for (const name of REQUEST_HEADERS) assert.ok(read.has(name), `${name} is read`);
  const unlisted = [...read].filter((name) => !(REQUEST_HEADERS as readonly string[]).includes(name));
  assert.equal(unlisted, [], `read but not in REQUEST_HEADERS: ${unlisted.join(", ")}`);
});

test.run();
