/**
 * `petstore-lib/client`: a Pet Store API client with the store's own `Operations` interface, safe
 * retries (one `Idempotency-Key` per create), pages read from `Link`, any `fetch`. It loads no
 * runtime dependency and no `node:` module (browsers, Workers, Deno, Bun): of the core it imports
 * only the error class and `nextCursor` (for generated clients' pages), so a bundle holds the
 * client and little else (bench row C1).
 *
 * The types of pets and pages are the core's: `import type { Pet, PetPage } from "petstore-lib"`.
 *
 * @example const pets = createPetStoreClient({ baseUrl: "https://pets.example/v1", key: "my-key" });
 */
export { isPetStoreError, PetStoreError } from "../lib/errors.ts";
export type { HeadersLike, ResponseLike } from "../lib/next-cursor.ts";
export { nextCursor } from "../lib/next-cursor.ts";
export type { DeprecationNotice } from "./answers.ts";
export { UNEXPECTED_ANSWER } from "./answers.ts";
export type { CallOptions, PetStoreClient, PetsQuery } from "./client.ts";
export { createPetStoreClient } from "./client.ts";
export type { Fetch } from "./exchange.ts";
export type { PetStoreClientOptions } from "./options.ts";
export type { RetryOptions } from "./retry.ts";
