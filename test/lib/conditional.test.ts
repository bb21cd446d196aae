/**
 * Conditional requests through `handle()` (contract 1.4, "Validators, caching and compression"):
 * strong `ETag`s on pets and pages and their HEADs, `If-None-Match` answered `304` with no body and
 * the headers RFC 9110 §15.4.5 keeps, never for a changed page, and after the checks that come first.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { memoryStorage } from "../../lib/entries/storage.ts";
import { call, createMany, errorOf, makeStore } from "../support/helpers.ts";

const ETAG = /^"[0-9a-f]{16}"$/;

test("validators: a page, a pet and their HEADs carry a strong ETag (HEAD's is GET's) and Vary: Accept-Encoding, whatever their size", async () => {
  const store = makeStore();
  await createMany(store, 3);
  for (const path of ["/v1/pets", "/v1/pets/2"]) {
    const get = await call(store, "GET", path);
    const head = await call(store, "HEAD", path);
    assert.match(get.headers.etag ?? "", ETAG, path);
    assert.is(head.headers.etag, get.headers.etag, path);
    assert.is(get.headers.vary, "Accept-Encoding", path);
    assert.is(head.headers.vary, "Accept-Encoding", path);
  }
});

test("validators: no ETag on a create, an error or the OpenAPI document", async () => {
  const store = makeStore();
  const answers = [
    await call(store, "POST", "/v1/pets", { body: '{"name":"Rex","categoryId":1}' }),
    await call(store, "GET", "/v1/pets/9"),
    await call(store, "GET", "/v1/pets", { auth: false }),
    await call(store, "GET", "/v1/openapi.json", { auth: false }),
  ];
  for (const answer of answers) assert.is(answer.headers.etag, undefined, String(answer.status));
});

test("If-None-Match: a pet's own ETag answers 304 with no body and the headers §15.4.5 keeps (ETag, Cache-Control, Vary, deprecation)", async () => {
  const store = makeStore();
  await createMany(store, 2);
  const first = await call(store, "GET", "/v1/pets/2");
  const again = await call(store, "GET", "/v1/pets/2", { headers: { "if-none-match": first.headers.etag } });
  assert.is(again.status, 304);
  assert.is(again.body, "");
  const { "x-request-id": id, ...headers } = again.headers;
  assert.ok(id);
  assert.equal(headers, {
    "content-length": first.headers["content-length"],
    "x-content-type-options": "nosniff",
    deprecation: first.headers.deprecation,
    sunset: first.headers.sunset,
    link: first.headers.link,
    etag: first.headers.etag,
    "cache-control": "private, no-cache",
    vary: "Accept-Encoding",
  });
});

test("If-None-Match: a page's ETag answers 304 with its ETag and Cache-Control, and no Content-Type or Link", async () => {
  const store = makeStore();
  await createMany(store, 3);
  const first = await call(store, "GET", "/v1/pets", { query: "limit=2" });
  assert.ok(first.headers.link, "a full page");
  const again = await call(store, "GET", "/v1/pets", {
    query: "limit=2",
    headers: { "if-none-match": first.headers.etag },
  });
  assert.is(again.status, 304);
  assert.is(again.body, "");
  assert.is(again.headers.etag, first.headers.etag);
  assert.is(again.headers["cache-control"], first.headers["cache-control"]);
  assert.is(again.headers.vary, "Accept-Encoding");
  assert.is(again.headers["content-length"], first.headers["content-length"], "the 200's length (RFC 9110 §8.6)");
  assert.is(again.headers["content-type"], undefined);
  assert.is(again.headers.link, undefined);
});

test("If-None-Match: a list holding the ETag, a weak W/ form of it, or * answers 304", async () => {
  const store = makeStore();
  await createMany(store, 1);
  const { etag } = (await call(store, "GET", "/v1/pets")).headers;
  for (const header of [`"a", ${etag}, "b"`, `W/${etag}`, `W/"a", W/${etag}`, "*"]) {
    assert.is((await call(store, "GET", "/v1/pets", { headers: { "if-none-match": header } })).status, 304, header);
  }
});

test("If-None-Match: HEAD answers 304 as GET does", async () => {
  const store = makeStore();
  await createMany(store, 1);
  for (const path of ["/v1/pets", "/v1/pets/1"]) {
    const { etag } = (await call(store, "GET", path)).headers;
    const head = await call(store, "HEAD", path, { headers: { "if-none-match": etag } });
    assert.is(head.status, 304, path);
    assert.is(head.headers.etag, etag, path);
  }
});

test("If-None-Match: another tag, another pet's tag, or a tag of another page answers 200 with the body", async () => {
  const store = makeStore();
  await createMany(store, 3);
  const otherPet = (await call(store, "GET", "/v1/pets/1")).headers.etag;
  const otherPage = (await call(store, "GET", "/v1/pets", { query: "limit=1" })).headers.etag;
  for (const header of ['"0000000000000000"', otherPet, otherPage, `"${otherPet}"`]) {
    const res = await call(store, "GET", "/v1/pets/2", { headers: { "if-none-match": header } });
    assert.is(res.status, 200, header);
    assert.is(JSON.parse(res.body).id, 2);
    const page = await call(store, "GET", "/v1/pets", { headers: { "if-none-match": header } });
    assert.is(page.status, 200, header);
  }
});

test("If-None-Match: the last page, once a pet is added, gets a new ETag and a 200 (the old tag no longer matches)", async () => {
  const store = makeStore();
  await createMany(store, 2);
  const before = await call(store, "GET", "/v1/pets", { query: "limit=2" });
  assert.is(before.headers.link, undefined, "the last page, full but still filling");
  await createMany(store, 1);
  const after = await call(store, "GET", "/v1/pets", {
    query: "limit=2",
    headers: { "if-none-match": before.headers.etag },
  });
  assert.is(after.status, 200, "same pets, but a next page now follows");
  assert.ok(after.headers.link);
  assert.is.not(after.headers.etag, before.headers.etag);
  const last = await call(store, "GET", "/v1/pets", { headers: { "if-none-match": before.headers.etag } });
  assert.is(last.status, 200, "the filling page holds three pets now");
});

test("If-None-Match: a full page answers 304 again after creates (its pets and its Link do not change)", async () => {
  const store = makeStore();
  await createMany(store, 3);
  const first = await call(store, "GET", "/v1/pets", { query: "limit=2" });
  await createMany(store, 5);
  const again = await call(store, "GET", "/v1/pets", {
    query: "limit=2",
    headers: { "if-none-match": first.headers.etag },
  });
  assert.is(again.status, 304);
});

test("If-None-Match: the checks before the operation come first (401 without a key, 400 for a bad query, 404 for no pet)", async () => {
  const store = makeStore();
  await createMany(store, 1);
  const any = { "if-none-match": "*" };
  assert.is((await call(store, "GET", "/v1/pets", { auth: false, headers: any })).status, 401);
  assert.is(errorOf(await call(store, "GET", "/v1/pets", { query: "limit=0", headers: any })).code, "invalid_query");
  assert.is(errorOf(await call(store, "GET", "/v1/pets/9", { headers: any })).code, "pet_not_found");
  assert.is(errorOf(await call(store, "GET", "/v1/pets/x", { headers: any })).code, "invalid_pet_id");
});

test("If-None-Match: a polled page kept in memory, and a page of storage that answers later, answer 304 alike", async () => {
  const memory = memoryStorage();
  const later: PetStorage = {
    ...memory,
    kind: "later",
    inProcess: false,
    list: (page) => Promise.resolve(memory.list(page)),
    get: (id) => Promise.resolve(memory.get(id)),
  };
  for (const storage of [memoryStorage(), later]) {
    const store = makeStore({ storage });
    await createMany(store, 2);
    const first = await call(store, "GET", "/v1/pets");
    for (let i = 0; i < 3; i++) {
      const again = await call(store, "GET", "/v1/pets", { headers: { "if-none-match": first.headers.etag } });
      assert.is(again.status, 304, storage.kind);
      const plain = await call(store, "GET", "/v1/pets");
      assert.is(plain.body, first.body, storage.kind);
      assert.is(plain.headers.etag, first.headers.etag, storage.kind);
    }
  }
});

test("If-None-Match: a 304 to a rate-limited caller and to a CORS page carries their headers too", async () => {
  const store = makeStore({
    rateLimit: { limit: 100, windowSeconds: 60 },
    cors: { origins: ["https://shop.example"] },
  });
  await createMany(store, 1);
  const origin = { origin: "https://shop.example" };
  const { etag } = (await call(store, "GET", "/v1/pets/1", { headers: origin })).headers;
  const again = await call(store, "GET", "/v1/pets/1", { headers: { ...origin, "if-none-match": etag } });
  assert.is(again.status, 304);
  assert.ok(again.headers.ratelimit);
  assert.ok(again.headers["ratelimit-policy"]);
  assert.is(again.headers["access-control-allow-origin"], "https://shop.example");
  assert.is(again.headers.vary, "Origin, Accept-Encoding");
  assert.match(again.headers["access-control-expose-headers"] ?? "", /\bETag\b/);
});

test.run();
