/**
 * Unit tests of business rules with the core alone: no HTTP server, memory storage, a fresh
 * store per test. Run them with `npx uvu -r tsx examples/unit-testing '\.test\.ts$'` (uvu and tsx are all they need).
 * In your project, import from "petstore-lib" instead of the path below.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { PetStore } from "../../lib/index.ts";
import { createPetStore, isPetStoreError } from "../../lib/index.ts";
import { availableInCategory, registerLitter } from "./shop.ts";

let store: PetStore;

test.before.each(() => {
  store = createPetStore({ auth: ["test-key"] }); // memory storage by default
});

test.after.each(async () => {
  await store.close();
});

/** Runs `action` and returns the PetStoreError code it failed with. */
async function errorCode(action: () => Promise<unknown>): Promise<string> {
  try {
    await action();
  } catch (error) {
    if (isPetStoreError(error)) return error.code;
    throw error;
  }
  throw new Error("expected a PetStoreError");
}

// Your rules.

test("registerLitter: every newborn is created pending, each with its own id", async () => {
  const pets = await registerLitter(store, { names: ["Ada", "Bob", "Cy"], categoryId: 3 });
  assert.equal(
    pets.map((p) => [p.name, p.status, p.categoryId]),
    [
      ["Ada", "pending", 3],
      ["Bob", "pending", 3],
      ["Cy", "pending", 3],
    ],
  );
  assert.is(new Set(pets.map((p) => p.id)).size, 3);
});

test("registerLitter: an empty litter is refused", async () => {
  try {
    await registerLitter(store, { names: [], categoryId: 3 });
    assert.unreachable("should have thrown");
  } catch (error) {
    assert.instance(error, RangeError);
  }
});

test("registerLitter: a blank name is refused by the store with invalid_body", async () => {
  assert.is(await errorCode(() => registerLitter(store, { names: ["   "], categoryId: 3 })), "invalid_body");
});

test("availableInCategory: follows every page and keeps only available pets of that category", async () => {
  for (let i = 0; i < 250; i++) await store.createPet({ name: `cat ${i}`, categoryId: 1 + (i % 2) });
  await registerLitter(store, { names: ["Kit"], categoryId: 1 }); // pending: not for sale yet
  const cats = await availableInCategory(store, 1);
  assert.is(cats.length, 125); // 250 pets over three pages of 100, half of them in category 1
  assert.ok(cats.every((p) => p.categoryId === 1 && p.status === "available"));
});

// The store's own rules your code relies on.

test("createPet: a pet without status is created available, with an assigned id", async () => {
  const pet = await store.createPet({ name: "Rex", categoryId: 1 });
  assert.equal(pet, { id: 1, name: "Rex", categoryId: 1, status: "available" });
  assert.equal(await store.getPet(pet.id), pet);
});

test("createPet: categoryId given as a string is refused with invalid_body naming the field", async () => {
  try {
    // @ts-expect-error: TypeScript refuses it too; a JavaScript caller gets the run-time check
    await store.createPet({ name: "Rex", categoryId: "5" });
    assert.unreachable("should have thrown");
  } catch (error) {
    assert.ok(isPetStoreError(error, "invalid_body"));
    assert.is(error.status, 400);
    assert.equal(
      error.details?.map((d) => d.path),
      ["categoryId"],
    );
  }
});

test("getPet: an unknown id is pet_not_found (404)", async () => {
  assert.is(await errorCode(() => store.getPet(999)), "pet_not_found");
});

test("listPets: limit 101 is refused with invalid_query", async () => {
  assert.is(await errorCode(() => store.listPets({ limit: 101 })), "invalid_query");
});

test("handle(): the HTTP contract without a server, e.g. 401 without a key", async () => {
  const res = await store.handle({ method: "GET", path: "/v1/pets", headers: {} });
  assert.is(res.status, 401);
  assert.is(JSON.parse(res.body).code, "unauthorized");
});

test.run();
