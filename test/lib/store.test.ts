/**
 * The public adapter protocol and the store's own checks: `respond()` without a promise when
 * nothing had to wait, header names in any case, the one query field (and its deprecated
 * aliases), and `createPetStore` refusing options it does not know or cannot use.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { lowerCaseHeaders } from "../../lib/http.ts";
import type { PetStorage } from "../../lib/index.ts";
import { createPetStore, isPromise, sqliteStorage } from "../../lib/index.ts";
import { AUTH, errorOf, json, KEY, makeStore } from "../support/helpers.ts";

test("respond: a page from memory storage is the response itself, not a promise", async () => {
  const store = makeStore();
  await store.createPet({ name: "Rex", categoryId: 1 });
  const response = store.respond({ method: "GET", path: "/v1/pets", headers: { authorization: AUTH } });
  assert.not.ok(isPromise(response));
  if (isPromise(response)) return;
  assert.is(response.status, 200);
  assert.equal(JSON.parse(response.body), [{ id: 1, name: "Rex", categoryId: 1, status: "available" }]);
});

test("respond: with an async verify the response is a promise of the same response handle() gives", async () => {
  const store = createPetStore({ auth: async (token) => token === KEY });
  const request = { method: "GET", path: "/v1/pets", headers: { authorization: AUTH, "x-request-id": "r1" } };
  const response = store.respond(request);
  assert.ok(isPromise(response));
  assert.equal(await response, await store.handle(request));
});

test("respond: never throws, even for a request that is not one (500 internal_error)", () => {
  const store = makeStore();
  const response = store.respond(null as never);
  assert.not.ok(isPromise(response));
  if (isPromise(response)) return;
  assert.is(response.status, 500);
  assert.is(errorOf(response).code, "internal_error");
});

test("handle: header names in any case are read (Authorization, Content-Type, X-Request-Id)", async () => {
  const store = makeStore();
  const created = await store.handle({
    method: "POST",
    path: "/v1/pets",
    headers: { Authorization: AUTH, "Content-Type": "application/json", "X-Request-Id": "abc" },
    body: '{"name":"Rex","categoryId":1}',
  });
  assert.is(created.status, 201, created.body);
  assert.is(created.headers["x-request-id"], "abc");
  const listed = await store.handle({ method: "GET", path: "/v1/pets", headers: { AUTHORIZATION: AUTH } });
  assert.is(listed.status, 200);
});

test("lowerCaseHeaders: the same object when names are lower-case; two spellings become one repeated header", () => {
  const lower = { authorization: "a", "content-type": "b" };
  assert.is(lowerCaseHeaders(lower), lower);
  assert.equal(lowerCaseHeaders({ Authorization: "a", authorization: "b", Host: "h" }), {
    authorization: ["a", "b"],
    host: "h",
  });
});

test("handle: a repeated Authorization header in two spellings is refused with 401", async () => {
  const store = makeStore();
  const response = await store.handle({
    method: "GET",
    path: "/v1/pets",
    headers: { Authorization: AUTH, authorization: AUTH },
  });
  assert.is(response.status, 401);
});

test("handle: the query string goes in `query` (with or without its leading ?)", async () => {
  const store = makeStore();
  for (let i = 0; i < 3; i++) await store.createPet({ name: `p${i}`, categoryId: 1 });
  for (const query of ["limit=2", "?limit=2"]) {
    const response = await store.handle({ method: "GET", path: "/v1/pets", query, headers: { authorization: AUTH } });
    assert.is((json(response) as unknown[]).length, 2, query);
  }
});

test("handle: the deprecated `search` field and a path carrying ?query still work", async () => {
  const store = makeStore();
  for (let i = 0; i < 3; i++) await store.createPet({ name: `p${i}`, categoryId: 1 });
  const headers = { authorization: AUTH };
  const bySearch = await store.handle({ method: "GET", path: "/v1/pets", search: "?limit=1", headers });
  const byPath = await store.handle({ method: "GET", path: "/v1/pets?limit=1", headers });
  assert.is((json(bySearch) as unknown[]).length, 1);
  assert.is((json(byPath) as unknown[]).length, 1);
});

test("createPetStore: an unknown option (a typo such as storgae) is refused, naming it", () => {
  assert.throws(
    () => createPetStore({ auth: [KEY], storgae: "memory" } as never),
    (error: Error) => error instanceof TypeError && /unknown option "storgae"/.test(error.message),
  );
});

test("createPetStore: a storage promise (await forgotten) is refused: did you forget await?", async () => {
  const pending = sqliteStorage({ path: ":memory:" });
  try {
    assert.throws(
      () => createPetStore({ auth: [KEY], storage: pending as unknown as PetStorage }),
      (error: Error) => /storage must be a PetStorage; did you forget await\?/.test(error.message),
    );
  } finally {
    await (await pending).close();
  }
});

test("createPetStore: a storage that is not a PetStorage is refused", () => {
  for (const storage of ["memory", {}, { kind: "x" }, 42]) {
    assert.throws(
      () => createPetStore({ auth: [KEY], storage: storage as never }),
      (error: Error) => /storage must be a PetStorage/.test(error.message),
      JSON.stringify(storage),
    );
  }
});

test("createPetStore: deprecatedAt/sunsetAt must be valid Dates and onError a function", () => {
  assert.throws(
    () => createPetStore({ auth: [KEY], sunsetAt: "2030-12-05" as never }),
    /sunsetAt must be a valid Date/,
  );
  assert.throws(
    () => createPetStore({ auth: [KEY], deprecatedAt: new Date("x") }),
    /deprecatedAt must be a valid Date/,
  );
  assert.throws(() => createPetStore({ auth: [KEY], onError: "log" as never }), /onError must be a function/);
});

test.run();
