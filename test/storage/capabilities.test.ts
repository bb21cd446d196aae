/**
 * What a storage says about itself (lib/storage/capabilities.ts): `cannotHang` (no time-out, no
 * breaker), `trustedPets` (pages not checked pet by pet), and the deprecated `inProcess`, which
 * still means both.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Pet } from "../../lib/entries/schemas.ts";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { memoryStorage } from "../../lib/entries/storage.ts";
import { call, makeStore } from "../support/helpers.ts";

const slowly = <T>(value: T): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(value), 60));

/** Memory storage whose `get` answers after 60 ms and whose `list` hands back a pet named "" (not a Pet). */
function oddStorage(says: Partial<Pick<PetStorage, "cannotHang" | "trustedPets" | "inProcess">>): PetStorage {
  const memory = memoryStorage();
  return {
    ...memory,
    kind: "odd",
    cannotHang: undefined,
    trustedPets: undefined,
    inProcess: undefined,
    ...says,
    get: async (id) => slowly(await memory.get(id)),
    list: async (page) => (await memory.list(page)).map((pet): Pet => ({ ...pet, name: "" })),
  };
}

async function answers(storage: PetStorage): Promise<{ slowGet: number; oddPage: number }> {
  const store = makeStore({ storage, operationTimeoutMs: 20 });
  await store.createPet({ name: "Rex", categoryId: 1 });
  const slowGet = (await call(store, "GET", "/v1/pets/1")).status;
  const oddPage = (await call(store, "GET", "/v1/pets")).status;
  await store.close();
  return { slowGet, oddPage };
}

test("storage capabilities: without any, a slow call times out (503) and a page with an invalid pet is a 500", async () => {
  assert.equal(await answers(oddStorage({})), { slowGet: 503, oddPage: 500 });
});

test("storage capabilities: cannotHang runs calls without a time-out; pages are still checked", async () => {
  assert.equal(await answers(oddStorage({ cannotHang: true })), { slowGet: 200, oddPage: 500 });
});

test("storage capabilities: trustedPets skips the check of each pet of a page; calls still time out", async () => {
  assert.equal(await answers(oddStorage({ trustedPets: true })), { slowGet: 503, oddPage: 200 });
});

test("storage capabilities: the deprecated inProcess still means both", async () => {
  assert.equal(await answers(oddStorage({ inProcess: true })), { slowGet: 200, oddPage: 200 });
});

test("storage capabilities: inProcess: false, given, still turns both off (over memory storage, which says both)", async () => {
  const memory = memoryStorage();
  const storage: PetStorage = { ...memory, inProcess: false, get: async (id) => slowly(await memory.get(id)) };
  const store = makeStore({ storage, operationTimeoutMs: 20 });
  await store.createPet({ name: "Rex", categoryId: 1 });
  assert.is((await call(store, "GET", "/v1/pets/1")).status, 503);
  await store.close();
});

test("storage capabilities: the memory storage says both", () => {
  const memory = memoryStorage();
  assert.is(memory.cannotHang, true);
  assert.is(memory.trustedPets, true);
});

test.run();
