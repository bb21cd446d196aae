/**
 * `petstore-lib/adapter`: the kit for writing an adapter, ours or anyone's. What an adapter needs
 * of a store, which requests are the store's, the headers the core reads, whether an answer must
 * be waited for, the request id of an answer made outside the core, and the one options check.
 * The store itself, its request and response types and its errors come from `petstore-lib`.
 *
 * @example import { type AdapterStore, isPromise, isUnderBasePath } from "petstore-lib/adapter";
 */
export type { Awaitable } from "./awaitable.ts";
export { isPromise } from "./awaitable.ts";
export type { BodyReader, HeaderValue, PetStoreRequest, PetStoreResponse } from "./http.ts";
export { isUnderBasePath, REQUEST_HEADERS } from "./http.ts";
export { checkOptionNames } from "./options.ts";
export { newRequestId, requestIdOf } from "./request-id.ts";
export type { AdapterStore } from "./store.ts";
