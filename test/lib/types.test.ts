/**
 * The public API is typed as strictly as it checks. Each `@ts-expect-error` below must stay an
 * error: `npm run typecheck` (CI) fails when one compiles. At run time the same calls are refused
 * by the checks JavaScript callers meet.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isPetStoreError } from "../../lib/index.ts";
import { makeStore } from "../support/helpers.ts";

test("types: createPet refuses a misspelt field at compile time and at run time", async () => {
  const store = makeStore();
  // @ts-expect-error: categoryID is not a NewPet field (categoryId is)
  const misspelt = store.createPet({ name: "Rex", categoryID: 1 });
  const error = await misspelt.catch((e: unknown) => e);
  assert.ok(isPetStoreError(error, "invalid_body"));
});

test("types: createPet refuses a string categoryId and an unknown status", async () => {
  const store = makeStore();
  // @ts-expect-error: categoryId is a number
  const asString = await store.createPet({ name: "Rex", categoryId: "1" }).catch((e: unknown) => e);
  // @ts-expect-error: "lost" is not a PetStatus
  const badStatus = await store.createPet({ name: "Rex", categoryId: 1, status: "lost" }).catch((e: unknown) => e);
  assert.ok(isPetStoreError(asString, "invalid_body"));
  assert.ok(isPetStoreError(badStatus, "invalid_body"));
});

test("types: listPets takes a PetStatus and a numeric limit only", async () => {
  const store = makeStore();
  // @ts-expect-error: "lost" is not a PetStatus
  const badStatus = await store.listPets({ status: "lost" }).catch((e: unknown) => e);
  // @ts-expect-error: limit is a number
  const badLimit = await store.listPets({ limit: "5" }).catch((e: unknown) => e);
  assert.ok(isPetStoreError(badStatus, "invalid_query"));
  assert.ok(isPetStoreError(badLimit, "invalid_query"));
  const page = await store.listPets({ status: "sold", limit: 5 });
  assert.equal(page.pets, []);
});

test.run();
