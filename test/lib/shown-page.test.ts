/**
 * A page answered again from a shared storage (lib/answers.ts, `showPage`): when the storage gives
 * the very same pets for the same limit, filter and next cursor (a polled page), the last answer is
 * given again; whatever differs (a pet another process changed, a next page gone, another page in
 * between) gets its own answer, the same as a store that never answered before builds.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PetStore, PetStoreResponse } from "../../lib/index.ts";
import type { Pet } from "../../lib/schemas.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import { call, json, makeStore } from "../support/helpers.ts";

const s = suite("lib: a page shown again");

/** A storage whose pets another process may change at any time (the test, through `pets`). */
function sharedStorage(pets: Pet[]): PetStorage {
  return {
    kind: "shared-test",
    async create(data) {
      const pet = { id: pets.length + 1, ...data };
      pets.push(pet);
      return { ...pet };
    },
    async get(id) {
      const pet = pets.find((p) => p.id === id);
      return pet && { ...pet };
    },
    async list({ status, after, limit }) {
      return pets
        .filter((p) => p.id > after && (status === undefined || p.status === status))
        .slice(0, limit)
        .map((p) => ({ ...p }));
    },
    async ping() {},
    async close() {},
  };
}

const PETS: Pet[] = [
  { id: 1, name: "Rex", categoryId: 1, status: "available" },
  { id: 2, name: "Mia", categoryId: 2, status: "sold" },
  { id: 3, name: "Bo", categoryId: 1, status: "available" },
];

/** The answer without what differs between any two answers (the request id). */
function answerOf(response: PetStoreResponse) {
  const { "x-request-id": _id, ...headers } = response.headers;
  return { status: response.status, headers, body: response.body };
}

/** The same page from a store that never answered a page before: built, never shown again. */
async function fresh(pets: Pet[], query: string) {
  const store = makeStore({ storage: sharedStorage(pets) });
  try {
    return answerOf(await call(store, "GET", "/v1/pets", { query }));
  } finally {
    await store.close();
  }
}

let pets: Pet[];
let store: PetStore;
s.before.each(() => {
  pets = PETS.map((p) => ({ ...p }));
  store = makeStore({ storage: sharedStorage(pets) });
});
s.after.each(async () => {
  await store.close();
});

const page = async (query: string) => answerOf(await call(store, "GET", "/v1/pets", { query }));

s("the same page asked again gets the same answer, as a store that never answered builds it", async () => {
  const first = await page("limit=2");
  const again = await page("limit=2");
  assert.equal(again, first);
  assert.equal(again, await fresh(pets, "limit=2"));
  assert.ok(again.headers.link?.includes("cursor="), "a next page follows");
});

const CHANGES: [string, Partial<Pet>][] = [
  ["name", { name: "Mia II" }],
  ["category", { categoryId: 9 }],
  ["status", { status: "pending" }],
];

for (const [what, change] of CHANGES) {
  s(`a pet whose ${what} another process changed shows at once, with a new tag`, async () => {
    const before = await page("limit=2");
    Object.assign(pets[1] as Pet, change);
    const after = await page("limit=2");
    assert.equal((JSON.parse(after.body) as Pet[])[1], pets[1]);
    assert.is.not(after.headers.etag, before.headers.etag);
    assert.equal(after, await fresh(pets, "limit=2"));
  });
}

s("the same pets without a next page any more: no Link, the last page's Cache-Control", async () => {
  const full = await page("limit=2");
  pets.splice(2, 1); // another process made pet 3 unreachable: pets 1 and 2 are the last page now
  const last = await page("limit=2");
  assert.is(last.body, full.body);
  assert.is(last.headers.link, undefined);
  assert.equal(last, await fresh(pets, "limit=2"));
  assert.is.not(last.headers["cache-control"], undefined);
});

s("other pages in between each get their own answer", async () => {
  const queries = ["limit=2", "limit=1", "limit=2&status=available", "limit=2", "status=sold", "limit=1"];
  for (const query of queries) assert.equal(await page(query), await fresh(pets, query), query);
});

s("HEAD and a matching If-None-Match still get their own answers for a page shown before", async () => {
  const shown = await page("limit=2");
  const head = await call(store, "HEAD", "/v1/pets", { query: "limit=2" });
  assert.is(head.status, 200);
  assert.is(head.body, "");
  assert.is(head.headers["content-length"], shown.headers["content-length"]);
  const unchanged = await call(store, "GET", "/v1/pets", {
    query: "limit=2",
    headers: { "if-none-match": shown.headers.etag },
  });
  assert.is(unchanged.status, 304);
  assert.is(unchanged.body, "");
  assert.equal(json(await call(store, "GET", "/v1/pets", { query: "limit=2" })), JSON.parse(shown.body));
});

s.run();
