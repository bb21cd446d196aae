/** listPets rules: limit, status, order, cursor pagination and the Link header, via listPets() and handle(). */

import { test } from "uvu";
import * as assert from "uvu/assert";
import { decodeCursor, encodeCursor } from "../../lib/cursor.ts";
import type { Pet, PetStatus } from "../../lib/entries/schemas.ts";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { memoryStorage } from "../../lib/entries/storage.ts";
import { createPetStore, isPetStoreError } from "../../lib/index.ts";
import { call, createMany, errorOf, json, makeStore, nextLink } from "../support/helpers.ts";

const badQueries: [rule: string, query: string][] = [
  ["limit=0", "limit=0"],
  ["limit=101", "limit=101"],
  ["limit=1.5", "limit=1.5"],
  ["limit=abc", "limit=abc"],
  ["limit= (empty)", "limit="],
  ["limit given twice", "limit=5&limit=6"],
  ["limit=-1", "limit=-1"],
  ["limit=1e1", "limit=1e1"],
  ["limit=%2B5 (+5)", "limit=%2B5"],
  ["limit=99999999999999999999", "limit=99999999999999999999"],
  ["status=Available (wrong case)", "status=Available"],
  ["status=lost", "status=lost"],
  ["status= (empty)", "status="],
  ["status given twice", "status=sold&status=sold"],
  ["a cursor the service did not issue", "cursor=abc"],
  ["cursor given twice", "cursor=a&cursor=b"],
  ["malformed percent-encoding in status", "status=%E0%A4%A"],
];

for (const [rule, query] of badQueries) {
  test(`handle GET /v1/pets: ${rule} is refused with 400 invalid_query`, async () => {
    const res = await call(makeStore(), "GET", "/v1/pets", { query });
    assert.is(res.status, 400);
    assert.is(errorOf(res).code, "invalid_query");
  });
}

const badInputs: [rule: string, input: Record<string, unknown>][] = [
  ["limit 0", { limit: 0 }],
  ["limit 101", { limit: 101 }],
  ["limit 1.5", { limit: 1.5 }],
  ['limit "abc"', { limit: "abc" }],
  ['status "Available"', { status: "Available" }],
  ["a cursor the service did not issue", { cursor: "abc" }],
];
for (const [rule, input] of badInputs) {
  test(`listPets: ${rule} is refused with invalid_query`, async () => {
    try {
      await makeStore().listPets(input as never);
      assert.unreachable();
    } catch (error) {
      assert.ok(isPetStoreError(error, "invalid_query"), String(error));
    }
  });
}

test("listPets: without limit at most 20 pets are returned (the default)", async () => {
  const store = makeStore();
  await createMany(store, 25);
  assert.is((await store.listPets()).pets.length, 20);
  const res = await call(store, "GET", "/v1/pets");
  assert.is((json(res) as Pet[]).length, 20);
  assert.is(nextLink(res), `/v1/pets?limit=20&cursor=${(await store.listPets()).nextCursor}`);
});

test("listPets: limit=1 and limit=100 are accepted", async () => {
  const store = makeStore();
  await createMany(store, 120);
  assert.is((json(await call(store, "GET", "/v1/pets", { query: "limit=1" })) as Pet[]).length, 1);
  assert.is((json(await call(store, "GET", "/v1/pets", { query: "limit=100" })) as Pet[]).length, 100);
  assert.is((await store.listPets({ limit: 100 })).pets.length, 100);
});

test("listPets: an empty store answers the bare array [] with no Link", async () => {
  const res = await call(makeStore(), "GET", "/v1/pets");
  assert.is(res.status, 200);
  assert.is(res.body, "[]");
  assert.is(res.headers.link, undefined);
});

test("listPets: the body is a bare array of Pets in ascending id order, keys in contract order", async () => {
  const store = makeStore();
  await createMany(store, 5, (i) => (["sold", "available", "pending"] as const)[i % 3]);
  const res = await call(store, "GET", "/v1/pets");
  const pets = json(res) as Pet[];
  assert.ok(Array.isArray(pets));
  assert.equal(
    pets.map((p) => p.id),
    [1, 2, 3, 4, 5],
  );
  for (const p of pets) assert.equal(Object.keys(p), ["id", "name", "categoryId", "status"]);
});

test("listPets: status=sold returns only sold pets; no status returns all", async () => {
  const store = makeStore();
  await createMany(store, 30, (i) => (["sold", "available", "pending"] as const)[i % 3]);
  const sold = json(await call(store, "GET", "/v1/pets", { query: "status=sold&limit=100" })) as Pet[];
  assert.is(sold.length, 10);
  assert.ok(sold.every((p) => p.status === "sold"));
  const all = json(await call(store, "GET", "/v1/pets", { query: "limit=100" })) as Pet[];
  assert.is(all.length, 30);
  assert.is((await store.listPets({ status: "pending", limit: 100 })).pets.length, 10);
});

test("listPets: unknown query parameters are ignored", async () => {
  const store = makeStore();
  await createMany(store, 3);
  const res = await call(store, "GET", "/v1/pets", { query: "foo=bar&x&limit=2&%ZZ=1" });
  assert.is(res.status, 200);
  assert.is((json(res) as Pet[]).length, 2);
});

test("listPets: the query may also come inside the path or as `search` with its ?", async () => {
  const store = makeStore();
  await createMany(store, 3);
  const inPath = await store.handle({
    method: "GET",
    path: "/v1/pets?limit=1",
    headers: { authorization: "Bearer test-key-0123456789" },
  });
  const search = await store.handle({
    method: "GET",
    path: "/v1/pets",
    search: "?limit=2",
    headers: { authorization: "Bearer test-key-0123456789" },
  });
  assert.is((json(inPath) as Pet[]).length, 1);
  assert.is((json(search) as Pet[]).length, 2);
});

test("listPets: the last page has no rel=next Link", async () => {
  const store = makeStore();
  await createMany(store, 10);
  const res = await call(store, "GET", "/v1/pets", { query: "limit=10" });
  assert.is(res.headers.link, undefined);
  const page = await store.listPets({ limit: 10 });
  assert.is(page.nextCursor, undefined);
});

test("listPets: Link is path-absolute and carries limit, status and cursor (RFC 8288)", async () => {
  const store = makeStore();
  await createMany(store, 10, () => "pending");
  const res = await call(store, "GET", "/v1/pets", { query: "status=pending&limit=3" });
  assert.match(res.headers.link ?? "", /^<\/v1\/pets\?limit=3&status=pending&cursor=[A-Za-z0-9_-]+>; rel="next"$/);
});

test("listPets: a cursor issued for another status filter is refused with invalid_query", async () => {
  const store = makeStore();
  await createMany(store, 10, () => "pending");
  const { nextCursor } = await store.listPets({ status: "pending", limit: 2 });
  const res = await call(store, "GET", "/v1/pets", { query: `status=sold&cursor=${nextCursor}` });
  assert.is(res.status, 400);
  assert.is(errorOf(res).code, "invalid_query");
});

test("listPets: a tampered cursor is refused with invalid_query", async () => {
  const store = makeStore();
  await createMany(store, 10);
  const { nextCursor } = await store.listPets({ limit: 2 });
  const c = nextCursor as string;
  const tampered = c.slice(0, 1) + (c[1] === "9" ? "8" : "9") + c.slice(2);
  assert.is((await call(store, "GET", "/v1/pets", { query: `cursor=${tampered}` })).status, 400);
});

/** Follows rel=next from the first page; returns the ids seen, failing on a loop. */
async function walk(store: ReturnType<typeof makeStore>, firstQuery: string): Promise<number[]> {
  const seen: number[] = [];
  let target: string | undefined = `/v1/pets?${firstQuery}`;
  for (let pages = 0; target !== undefined; pages++) {
    assert.ok(pages < 1000, "the walk ends");
    const res = await store.handle({
      method: "GET",
      path: target,
      headers: { authorization: "Bearer test-key-0123456789" },
    });
    assert.is(res.status, 200, res.body);
    seen.push(...(json(res) as Pet[]).map((p) => p.id));
    target = nextLink(res);
  }
  return seen;
}

test("pagination walk: 250 pets of mixed statuses, limit=7, every pet exactly once and in order", async () => {
  const store = makeStore();
  const statuses = ["available", "pending", "sold"] as const;
  const pets = await createMany(store, 250, (i) => statuses[(i * 7 + (i >> 3)) % 3] as (typeof statuses)[number]);
  const seen = await walk(store, "limit=7");
  assert.equal(
    seen,
    pets.map((p) => p.id),
  );
  for (const status of statuses) {
    const expected = pets.filter((p) => p.status === status).map((p) => p.id);
    assert.ok(expected.length > 0);
    assert.equal(await walk(store, `limit=7&status=${status}`), expected, `walk with status=${status}`);
  }
});

test("pagination walk: pets created during the walk do not disturb it (every pet that existed throughout is seen once)", async () => {
  const store = makeStore();
  const before = await createMany(store, 50);
  const seen: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listPets({ limit: 7, cursor });
    seen.push(...page.pets.map((p) => p.id));
    cursor = page.nextCursor;
    await store.createPet({ name: "late", categoryId: 1 });
  } while (cursor);
  for (const p of before) assert.is(seen.filter((id) => id === p.id).length, 1);
  assert.equal(
    seen,
    [...seen].sort((a, b) => a - b),
  );
});

test("listPets(): returns the page, the effective limit and the next cursor", async () => {
  const store = makeStore();
  await createMany(store, 5);
  const page = await store.listPets({ limit: 2 });
  assert.equal(
    page.pets.map((p) => p.id),
    [1, 2],
  );
  assert.is(page.limit, 2);
  assert.type(page.nextCursor, "string");
  const next = await store.listPets({ limit: 2, cursor: page.nextCursor });
  assert.equal(
    next.pets.map((p) => p.id),
    [3, 4],
  );
});

test("listPets: names with quotes, backslashes, control characters and lone surrogates are valid JSON, as JSON.stringify writes them", async () => {
  const store = makeStore();
  const names = ['a"b', "a\\b", "tab\there", "nl\n", "\u0000", "\u001f", "\ud800x", "ok", "🐶", "é"];
  for (const name of names) await store.createPet({ name, categoryId: 1 });
  const res = await call(store, "GET", "/v1/pets");
  const parsed = json(res) as Pet[];
  assert.equal(
    parsed.map((p) => p.name),
    names,
  );
  assert.is(res.body, JSON.stringify(parsed));
});

test("operations hand out the caller's own copies: changing one changes nothing stored", async () => {
  const store = makeStore();
  const created = await store.createPet({ name: "Rex", categoryId: 1 });
  created.name = "changed by the caller";
  const got = await store.getPet(1);
  assert.is(got.name, "Rex");
  got.status = "sold";
  const { pets } = await store.listPets();
  assert.equal(pets, [{ id: 1, name: "Rex", categoryId: 1, status: "available" }]);
  (pets[0] as Pet).categoryId = 99;
  assert.equal(await store.getPet(1), { id: 1, name: "Rex", categoryId: 1, status: "available" });
  assert.not.ok(Object.isFrozen(got), "a plain object, the caller's to change");
  const res = await call(store, "GET", "/v1/pets/1");
  assert.is(res.body, '{"id":1,"name":"Rex","categoryId":1,"status":"available"}');
});

test("handle GET /v1/pets: the query is read as URLSearchParams would (encoded names and values, empty parts, unknown names ignored)", async () => {
  const store = makeStore();
  await createMany(store, 30);
  const accepted: [query: string, limit: number][] = [
    ["l%69mit=3", 3],
    ["limit=%34", 4],
    ["&&limit=5&", 5],
    ["x=%ZZ&limit=6", 6], // a badly encoded unknown parameter is ignored like any unknown one
    ["status=available&limit=7&other=1&other=2", 7],
    ["limit=8&status=%61vailable", 8],
    ["", 20],
  ];
  for (const [query, limit] of accepted) {
    const res = await call(store, "GET", "/v1/pets", { query });
    assert.is(res.status, 200, `${query}: ${res.body}`);
    const pets = json(res) as Pet[];
    assert.is(pets.length, limit, query);
    if (query.includes("status")) assert.ok(pets.every((p) => p.status === "available"));
  }
  for (const [query, repeated] of [
    ["status=sold&status=sold&limit=1&limit=2", "limit"],
    ["cursor=a&cursor=b&status=sold&status=pending", "status"],
    ["l%69mit=1&limit=2", "limit"],
  ] as const) {
    const res = await call(store, "GET", "/v1/pets", { query });
    assert.is(res.status, 400);
    assert.equal(errorOf(res).details, [{ path: repeated, message: "is repeated" }], query);
  }
  const bare = await call(store, "GET", "/v1/pets", { query: "limit" });
  assert.is(errorOf(bare).code, "invalid_query", "a name without a value is an empty value");
});

test("cursors keep their format across versions: one issued by 1.0.0 is still accepted (a rolling upgrade shares them)", async () => {
  // Issued by 1.0.0 for the page after pet 123456 in status=sold, and for the page after pet 40.
  const store = makeStore();
  await createMany(store, 45);
  const after40 = await call(store, "GET", "/v1/pets", { query: "limit=2&cursor=a141oi6scv" });
  assert.is(after40.status, 200, after40.body);
  assert.equal(
    (json(after40) as Pet[]).map((p) => p.id),
    [41, 42],
  );
  const sold = await call(store, "GET", "/v1/pets", { query: "status=sold&cursor=s2n9c1fihym4" });
  assert.is(sold.status, 200, sold.body);
  assert.equal(json(sold), []);
});

test("listPets: a storage that returns more pets than asked gives a page of the limit, with a next page", async () => {
  const pets: Pet[] = Array.from({ length: 30 }, (_, i) => ({
    id: i + 1,
    name: `p${i + 1}`,
    categoryId: 1,
    status: "available",
  }));
  const storage: PetStorage = {
    kind: "generous",
    create: async () => assert.unreachable() as never,
    get: () => undefined,
    list: ({ after }) => pets.filter((p) => p.id > after), // ignores the limit
    ping: async () => {},
    close: async () => {},
  };
  const store = createPetStore({ auth: ["k"], storage });
  for (const limit of [1, 5, 20]) {
    const page = await store.listPets({ limit });
    assert.equal(
      page.pets.map((p) => p.id),
      Array.from({ length: limit }, (_, i) => i + 1),
    );
    assert.ok(page.nextCursor !== undefined, `limit ${limit}: a next page`);
  }
});

test("cursors: those issued by 1.1 (another process on the same storage) are still the same strings, and decode", () => {
  // Written by 1.1.0's encodeCursor: a process of another version sharing the storage issues these.
  const issued: [number, PetStatus | undefined, string][] = [
    [1, undefined, "a1169dvkx"],
    [40, "available", "v1416mrb4u"],
    [123456, "pending", "p2n9c1238sux"],
    [2 ** 31, "sold", "szik0zk0nwrund"],
    [Number.MAX_SAFE_INTEGER, undefined, "a2gosa7pa2gv07daxgj"],
  ];
  for (const [id, status, cursor] of issued) {
    assert.is(encodeCursor(id, status), cursor);
    assert.is(decodeCursor(cursor, status), id);
  }
  for (const id of [1, 40, 123456, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
    for (const status of [undefined, "available", "pending", "sold"] as const) {
      assert.is(decodeCursor(encodeCursor(id, status), status), id, `${id} ${status}`);
    }
  }
});

test("handle GET /v1/pets: pages stay exact when pets share a slot of the cache of pet texts (16,384 slots)", async () => {
  const store = makeStore();
  const count = 16_384 + 150; // ids 16,385 and up take the slots of ids 1 and up
  for (let i = 1; i <= count; i++)
    await store.createPet({ name: i % 7 === 0 ? `Ünï ${i}` : `pet ${i}`, categoryId: 1 + (i % 5) });
  const walk = async () => {
    const bodies: string[] = [];
    let query = "limit=100";
    for (;;) {
      const res = await call(store, "GET", "/v1/pets", { query });
      assert.is(res.headers["content-length"], String(Buffer.byteLength(res.body)));
      bodies.push(res.body);
      const next = nextLink(res);
      if (next === undefined) return bodies;
      query = next.split("?")[1] as string;
    }
  };
  const first = await walk();
  const second = await walk();
  assert.equal(second, first);
  const ids = first.flatMap((body) => (JSON.parse(body) as Pet[]).map((p) => p.id));
  assert.equal(
    ids,
    Array.from({ length: count }, (_, i) => i + 1),
  );
  const one = json(await call(store, "GET", "/v1/pets/7")) as Pet;
  assert.equal(one, { id: 7, name: "Ünï 7", categoryId: 3, status: "available" });
  for (const id of [1, 16_385, 1, 16_385, 14, 16_398]) {
    const pet = json(await call(store, "GET", `/v1/pets/${id}`)) as Pet;
    assert.equal(pet.id, id, "a pet sharing a slot never answers for another");
  }
});

test("handle GET /v1/pets: a page asked again answers the pets of now (more pets, another filter from the same first id, other pets at the same ids)", async () => {
  const storage = memoryStorage();
  const store = makeStore({ storage });
  const names = (body: string) => (JSON.parse(body) as Pet[]).map((p) => `${p.id}:${p.name}:${p.status}`);
  const page = async (query: string) => {
    const res = await call(store, "GET", "/v1/pets", { query });
    assert.is(res.headers["content-length"], String(Buffer.byteLength(res.body)));
    return names(res.body);
  };
  await store.createPet({ name: "a", categoryId: 1, status: "sold" });
  await store.createPet({ name: "b", categoryId: 1, status: "pending" });
  assert.equal(await page("limit=5"), ["1:a:sold", "2:b:pending"]);
  assert.equal(await page("limit=5"), ["1:a:sold", "2:b:pending"]);
  await store.createPet({ name: "c", categoryId: 1, status: "sold" });
  assert.equal(await page("limit=5"), ["1:a:sold", "2:b:pending", "3:c:sold"]);
  // Same first id and length as the page before it, other pets.
  assert.equal(await page("limit=2"), ["1:a:sold", "2:b:pending"]);
  assert.equal(await page("limit=2&status=sold"), ["1:a:sold", "3:c:sold"]);
  assert.equal(await page("limit=2"), ["1:a:sold", "2:b:pending"]);
  await storage.clear?.();
  await store.createPet({ name: "x", categoryId: 2, status: "sold" });
  await store.createPet({ name: "y", categoryId: 2, status: "sold" });
  assert.equal(await page("limit=2"), ["1:x:sold", "2:y:sold"]);
  assert.equal(await page("limit=2&status=sold"), ["1:x:sold", "2:y:sold"]);
});

test("listPets: a query string asked again gets the store's page of now, its Link included", async () => {
  // The core keeps the last query string, cursor and Link header it made: none may outlive its page.
  const store = makeStore();
  await createMany(store, 2);
  const first = await call(store, "GET", "/v1/pets", { query: "limit=2" });
  assert.is(first.headers.link, undefined, "two pets, limit 2: no next page");
  await createMany(store, 2, () => "sold");
  const again = await call(store, "GET", "/v1/pets", { query: "limit=2" });
  assert.equal(
    (json(again) as Pet[]).map((p) => p.id),
    [1, 2],
  );
  assert.is(nextLink(again), `/v1/pets?limit=2&cursor=${encodeCursor(2, undefined)}`);
  // The same last id under another filter or limit is another cursor or another Link.
  const sold = await call(store, "GET", "/v1/pets", { query: "limit=1&status=sold" });
  assert.is(nextLink(sold), `/v1/pets?limit=1&status=sold&cursor=${encodeCursor(3, "sold")}`);
  const one = await call(store, "GET", "/v1/pets", { query: "limit=1" });
  assert.is(nextLink(one), `/v1/pets?limit=1&cursor=${encodeCursor(1, undefined)}`);
  assert.is(nextLink(await call(store, "GET", "/v1/pets", { query: "limit=2" })), nextLink(again));
  // A refused query string is refused each time, between accepted ones.
  for (const query of ["limit=0", "limit=2", "limit=0"]) {
    const res = await call(store, "GET", "/v1/pets", { query });
    assert.is(res.status, query === "limit=0" ? 400 : 200, query);
  }
  // Two stores with other base paths, asked in turn, each write their own Link.
  const shop = makeStore({ basePath: "/shop/v1" });
  await createMany(shop, 3);
  for (let i = 0; i < 2; i++) {
    assert.is(
      nextLink(await call(shop, "GET", "/shop/v1/pets", { query: "limit=2" })),
      `/shop/v1/pets?limit=2&cursor=${encodeCursor(2, undefined)}`,
    );
    assert.is(
      nextLink(await call(store, "GET", "/v1/pets", { query: "limit=2" })),
      `/v1/pets?limit=2&cursor=${encodeCursor(2, undefined)}`,
    );
  }
});

test("encodeCursor: the same id under each filter, asked in turn, gives each filter's own cursor", () => {
  const made = (["available", "pending", "sold", undefined] as const).map((s) => encodeCursor(7, s));
  assert.is(new Set(made).size, 4);
  for (const [i, s] of (["available", "pending", "sold", undefined] as const).entries()) {
    assert.is(encodeCursor(7, s), made[i]);
    assert.is(decodeCursor(made[i] as string, s), 7);
    assert.is(encodeCursor(8, s) === made[i], false);
  }
});

test("encodeCursor: cursors are the strings earlier versions issued, so a client's cursor outlives an upgrade", () => {
  // Issued by 3fcb4f5 (1.2): the same id and filter give the same string, and it still decodes.
  const issued = [
    [20, undefined, "ak0hadn5f"],
    [7, "available", "v707bv1vo"],
    [7, "pending", "p707cg6ha"],
    [123456789, "sold", "s21i3v91xlayoc"],
  ] as const;
  for (const [id, status, cursor] of issued) {
    assert.is(encodeCursor(id, status), cursor);
    assert.is(decodeCursor(cursor, status), id);
  }
});

test.run();

test("handle GET /v1/pets over memory: a query asked again before any write is answered without reading the storage again", async () => {
  const storage = memoryStorage();
  const list = storage.list.bind(storage);
  let reads = 0;
  storage.list = (page) => {
    reads++;
    return list(page);
  };
  const store = makeStore({ storage });
  await createMany(store, 3);
  const first = await call(store, "GET", "/v1/pets", { query: "limit=2" });
  const again = await call(store, "GET", "/v1/pets", { query: "limit=2" });
  assert.is(reads, 1, "the second answer comes from the first one's text");
  assert.is(again.body, first.body);
  assert.is(again.headers.link, first.headers.link);
  assert.is(again.headers["content-length"], first.headers["content-length"]);
  assert.is.not(again.headers["x-request-id"], first.headers["x-request-id"], "each answer has its own request id");
  const head = await call(store, "HEAD", "/v1/pets", { query: "limit=2" });
  assert.is(head.body, "");
  assert.is(head.headers["content-length"], first.headers["content-length"]);
  // Another query string, a create, a clear: each is read again.
  await call(store, "GET", "/v1/pets", { query: "limit=3" });
  assert.is(reads, 2);
  await call(store, "GET", "/v1/pets", { query: "limit=2" });
  assert.is(reads, 3);
  await store.createPet({ name: "new", categoryId: 1 });
  assert.is((json(await call(store, "GET", "/v1/pets", { query: "limit=2" })) as Pet[]).length, 2);
  assert.is(reads, 4, "a write in between: read again");
  await storage.clear?.();
  assert.equal(json(await call(store, "GET", "/v1/pets", { query: "limit=2" })), []);
  assert.is(reads, 5, "a clear in between: read again");
  // In process, listPets() always reads: its pets are the caller's own objects.
  await store.listPets({ limit: 2 });
  await store.listPets({ limit: 2 });
  assert.is(reads, 7);
});
