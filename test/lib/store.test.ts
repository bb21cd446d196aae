/**
 * The public adapter protocol and the store's own checks: `respond()` without a promise when
 * nothing had to wait, header names in any case, the one query field (and its deprecated
 * aliases), and `createPetStore` refusing options it does not know or cannot use.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isPromise } from "../../lib/adapter.ts";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { memoryStorage, sqliteStorage } from "../../lib/entries/storage.ts";
import { lowerCaseHeaders } from "../../lib/http.ts";
import { createPetStore } from "../../lib/index.ts";
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

test("respond: a create on memory storage with its body in hand is the response itself, not a promise", async () => {
  const store = makeStore();
  const request = {
    method: "POST",
    path: "/v1/pets",
    headers: { authorization: AUTH, "content-type": "application/json" },
  };
  for (const body of ['{"name":"Rex","categoryId":1}', new TextEncoder().encode('{"name":"Tom","categoryId":2}')]) {
    const response = store.respond({ ...request, body });
    assert.not.ok(isPromise(response), typeof body);
    if (isPromise(response)) return;
    assert.is(response.status, 201, response.body);
  }
  // Refused without a promise as well; a body behind a reader has to be waited for.
  const refused = store.respond({ ...request, body: '{"name":""}' });
  assert.ok(!isPromise(refused) && refused.status === 400);
  const read = store.respond({ ...request, body: async () => '{"name":"Max","categoryId":3}' });
  assert.ok(isPromise(read));
  assert.is((await read).status, 201);
  const { pets } = await store.listPets();
  assert.equal(
    pets.map((pet) => pet.name),
    ["Rex", "Tom", "Max"],
  );
});

test("createPet: over a memory storage whose create was replaced (a wrapper, a spy), that create is called", async () => {
  const inner = memoryStorage();
  const names: string[] = [];
  const storage: PetStorage = {
    ...inner,
    create: (data) => {
      names.push(data.name);
      return inner.create(data);
    },
  };
  const store = createPetStore({ auth: [KEY], storage });
  await store.createPet({ name: "Rex", categoryId: 1 });
  const response = await store.handle({
    method: "POST",
    path: "/v1/pets",
    headers: { authorization: AUTH, "content-type": "application/json" },
    body: '{"name":"Tom","categoryId":2}',
  });
  assert.is(response.status, 201, response.body);
  assert.equal(names, ["Rex", "Tom"]);
  assert.equal(
    (await inner.list({ after: 0, limit: 5 })).map((pet) => pet.name),
    ["Rex", "Tom"],
  );
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

test('handle: a repeated Authorization header in two spellings is refused with 400 invalid_request, error="invalid_request"', async () => {
  const store = makeStore();
  const response = await store.handle({
    method: "GET",
    path: "/v1/pets",
    headers: { Authorization: AUTH, authorization: AUTH },
  });
  assert.is(response.status, 400);
  assert.is(JSON.parse(response.body).code, "invalid_request");
  assert.is(response.headers["www-authenticate"], 'Bearer realm="petstore", error="invalid_request"');
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

test("createPetStore: a storage URL string is refused, pointing to openStorage(that URL), its password hidden", () => {
  assert.throws(
    () => createPetStore({ auth: [KEY], storage: "sqlite:./x.db" as never }),
    (error: Error) =>
      error instanceof TypeError &&
      error.message ===
        'createPetStore: storage must be a PetStorage; a string is a storage URL: pass storage: await openStorage("sqlite:./x.db")',
  );
  assert.throws(
    () => createPetStore({ auth: [KEY], storage: "redis://:s3cret@127.0.0.1:6379" as never }),
    (error: Error) =>
      /openStorage\("redis:\/\/:\*\*\*@127\.0\.0\.1:6379"\)/.test(error.message) && !/s3cret/.test(error.message),
  );
});

test("createPetStore: auth given as a string is refused, saying what to pass instead, without repeating the key", () => {
  assert.throws(
    () => createPetStore({ auth: "my-secret-key" as never }),
    (error: Error) =>
      error instanceof TypeError &&
      /auth must be a list of keys, not a string: auth: \[key\] .*apiKeys\(\[key\]\)/.test(error.message) &&
      !error.message.includes("my-secret-key"),
  );
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
