/**
 * Your own business rules, written on top of the pet store's core: they take a `PetStore` and
 * call its operations as plain async functions, so they are tested without any HTTP (see
 * shop.test.ts). In your project, import from "petstore-lib" and
 * "petstore-lib/schemas" instead of the paths below.
 */
import type { Pet } from "../../lib/entries/schemas.ts";
import type { PetStore } from "../../lib/index.ts";

/**
 * Registers a litter: every newborn is created `pending` (not for sale before its checks).
 * All names are checked by the store; an empty litter is a mistake of the caller.
 */
export async function registerLitter(store: PetStore, litter: { names: string[]; categoryId: number }): Promise<Pet[]> {
  if (litter.names.length === 0) throw new RangeError("a litter has at least one animal");
  const pets: Pet[] = [];
  for (const name of litter.names) {
    pets.push(await store.createPet({ name, categoryId: litter.categoryId, status: "pending" }));
  }
  return pets;
}

/** Every available pet of one category, following the pages of `listPets` until the last one. */
export async function availableInCategory(store: PetStore, categoryId: number): Promise<Pet[]> {
  const found: Pet[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await store.listPets({ status: "available", limit: 100, cursor });
    found.push(...page.pets.filter((pet) => pet.categoryId === categoryId));
    if (page.nextCursor === undefined) return found;
    cursor = page.nextCursor;
  }
  throw new Error("availableInCategory: more pages than expected");
}
