/**
 * An application's code that calls a Pet Store, as the tests beside it exercise it: it lists what
 * is for sale (every page) and takes deliveries in, one pet per order however often a delivery is
 * retried. It talks through petstore-lib/client; `fetch` lets a test run it in process.
 */
import type { Fetch } from "../../client/index.ts";
import { createPetStoreClient } from "../../client/index.ts";
import type { Pet } from "../../lib/entries/schemas.ts";

export interface ShopOptions {
  /** e.g. "https://pets.example/v1" (a test server's `url`). */
  baseUrl: string;
  key: string;
  /** Another fetch (a test store's `t.fetch`); default: the global one. */
  fetch?: Fetch;
}

export function petShop({ baseUrl, key, fetch }: ShopOptions) {
  const pets = createPetStoreClient({ baseUrl, key, ...(fetch === undefined ? {} : { fetch }) });
  return {
    /** The names of every available pet, page after page. */
    async forSale(): Promise<string[]> {
      const names: string[] = [];
      for await (const pet of pets.pets({ status: "available", limit: 50 })) names.push(pet.name);
      return names;
    },
    /** Stores the pet of a delivery: one per order id, whatever is retried on the way. */
    async receive(orderId: string, name: string, categoryId: number): Promise<Pet> {
      const { pet } = await pets.createPet({ name, categoryId }, { idempotencyKey: `order-${orderId}` });
      return pet;
    },
  };
}
