/**
 * `petstore-lib`: the Pet Store core. `createPetStore({ storage, auth })` gives the spec's
 * operations as plain async functions and `respond(request)` / `handle(request)`, the whole HTTP
 * contract without an HTTP framework. The root holds the domain: the factory, the operations'
 * types, errors and rules, `openStorage`. The rest has an entry of its own: `petstore-lib/storage`
 * (backends, the storage port), `petstore-lib/schemas` (valibot schemas), `petstore-lib/auth`,
 * `petstore-lib/observe`, `petstore-lib/openapi`, `petstore-lib/adapter` (the adapter kit).
 * Every name here is public API until 2.0, the deprecated ones included.
 */
import * as adapter from "./adapter.ts";

export type {
  /** @deprecated Import from "petstore-lib/adapter". */
  Awaitable,
  /** @deprecated Import from "petstore-lib/adapter". */
  BodyReader,
  /** @deprecated Import from "petstore-lib/adapter". */
  HeaderValue,
} from "./adapter.ts";
export type { AuthOption } from "./auth/option.ts";
export type { CacheControlOptions } from "./cache-control.ts";
export type { CorsOptions } from "./cors.ts";
// Names that moved to an entry of their own in 1.4, kept here until 2.0. Each is the same binding
// as in its new home (one class, one schema), marked deprecated so an editor shows where it went.
export {
  /** @deprecated Import from "petstore-lib/auth". */
  type ApiKey,
  /** @deprecated Import from "petstore-lib/auth". */
  type AuthSettings,
  /** @deprecated Import from "petstore-lib/auth". */
  type AuthThrottledObservation,
  /** @deprecated Import from "petstore-lib/auth". */
  apiKeys,
  /** @deprecated Import from "petstore-lib/auth". */
  type FailureLimitOptions,
  /** @deprecated Import from "petstore-lib/auth". */
  type JwtOptions,
  /** @deprecated Import from "petstore-lib/auth". */
  type JwtVerifier,
  /** @deprecated Import from "petstore-lib/auth". */
  jwt,
  /** @deprecated Import from "petstore-lib/auth". */
  type Principal,
  /** @deprecated Import from "petstore-lib/auth". */
  SCOPES,
  /** @deprecated Import from "petstore-lib/auth". */
  type Scope,
  /** @deprecated Import from "petstore-lib/auth". */
  type Verdict,
  /** @deprecated Import from "petstore-lib/auth". */
  type VerifyToken,
} from "./entries/auth.ts";
export type {
  /** @deprecated Import from "petstore-lib/observe". */
  BreakerObservation,
  /** @deprecated Import from "petstore-lib/observe". */
  InvalidRecordObservation,
  /** @deprecated Import from "petstore-lib/observe". */
  Observation,
  /** @deprecated Import from "petstore-lib/observe". */
  Observer,
  /** @deprecated Import from "petstore-lib/observe". */
  RateLimitObservation,
  /** @deprecated Import from "petstore-lib/observe". */
  RequestObservation,
  /** @deprecated Import from "petstore-lib/observe". */
  StorageObservation,
  /** @deprecated Import from "petstore-lib/observe". */
  StorageOperation,
  /** @deprecated Import from "petstore-lib/observe". */
  TracerProviderLike,
} from "./entries/observe.ts";
export {
  /** @deprecated Import from "petstore-lib/openapi". */
  buildOpenApi,
  /** @deprecated Import from "petstore-lib/openapi". */
  type OpenApiDocument,
  /** @deprecated Import from "petstore-lib/openapi". */
  type OpenApiOptions,
} from "./entries/openapi.ts";
export {
  /** @deprecated Import from "petstore-lib/schemas". */
  type CheckedNewPet,
  /** @deprecated Import from "petstore-lib/schemas". */
  DEFAULT_DEPRECATED_AT,
  /** @deprecated Import from "petstore-lib/schemas". */
  DEFAULT_SUNSET_AT,
  /** @deprecated Import from "petstore-lib/schemas". */
  ErrorSchema,
  /** @deprecated Import from "petstore-lib/schemas". */
  ListQuery,
  /** @deprecated Import from "petstore-lib/schemas". */
  NewPet,
  /** @deprecated Import from "petstore-lib/schemas". */
  PET_STATUSES,
  /** @deprecated Import from "petstore-lib/schemas". */
  Pet,
  /** @deprecated Import from "petstore-lib/schemas". */
  PetStatus,
  /** @deprecated Import from "petstore-lib/schemas". */
  Pets,
} from "./entries/schemas.ts";
export {
  /** @deprecated Import from "petstore-lib/storage". */
  type CreateOnceResult,
  /** @deprecated Import from "petstore-lib/storage". */
  type IdempotencyRecord,
  /** @deprecated Import from "petstore-lib/storage". */
  type ImportMark,
  /** @deprecated Import from "petstore-lib/storage". */
  InvalidRecordError,
  /** @deprecated Import from "petstore-lib/storage". */
  type KeyRecord,
  /** @deprecated Import from "petstore-lib/storage". */
  type ListPage,
  /** @deprecated Import from "petstore-lib/storage". */
  type MemoryStorageOptions,
  /** @deprecated Import from "petstore-lib/storage". */
  memoryStorage,
  /** @deprecated Import from "petstore-lib/storage". */
  type PetData,
  /** @deprecated Import from "petstore-lib/storage". */
  type PetStorage,
  /** @deprecated Import from "petstore-lib/storage". */
  type PostgresStorageOptions,
  /** @deprecated Import from "petstore-lib/storage". */
  postgresStorage,
  /** @deprecated Import from "petstore-lib/storage". */
  type RateCounter,
  /** @deprecated Import from "petstore-lib/storage". */
  type RateLease,
  /** @deprecated Import from "petstore-lib/storage". */
  type RedisStorageOptions,
  /** @deprecated Import from "petstore-lib/storage". */
  redisStorage,
  /** @deprecated Import from "petstore-lib/storage". */
  type SqliteStorageOptions,
  /** @deprecated Import from "petstore-lib/storage". */
  type StorageTransfer,
  /** @deprecated Import from "petstore-lib/storage". */
  StorageWarning,
  /** @deprecated Import from "petstore-lib/storage". */
  sqliteStorage,
} from "./entries/storage.ts";
export type { AnyErrorCode, ErrorBody, ErrorCode, ErrorDetail } from "./errors.ts";
export { ERRORS, isPetStoreError, PetStoreError } from "./errors.ts";
export type { PetStoreRequest, PetStoreResponse } from "./http.ts";
export type { IdempotentCreateOptions } from "./idempotency.ts";
export { DEFAULT_IDEMPOTENCY_TTL_MS, scopeOf } from "./idempotency.ts";
export {
  /** @deprecated Import from "petstore-lib/client". */
  type HeadersLike,
  /** @deprecated Import from "petstore-lib/client". */
  nextCursor,
  /** @deprecated Import from "petstore-lib/client". */
  type ResponseLike,
} from "./next-cursor.ts";
export type {
  CreateContext,
  CreatedPet,
  ListPetsInput,
  NewPetInput,
  Operations,
  PetPage,
} from "./operations.ts";
export type { RateLimitOptions } from "./rate-limit.ts";
export type { PetStoreRules, RuleCodeDeclaration, RuleContext, RuleStatus } from "./rules.ts";
export { isRuleViolation, RULE_CODE_PATTERN, RuleViolation } from "./rules.ts";
export type { BreakerOptions } from "./storage/breaker.ts";
export type { OpenStorageOptions } from "./storage/open.ts";
export { openStorage, StorageConfigError } from "./storage/open.ts";
export type { Handle, PetStore, PetStoreOptions, Readiness, Respond } from "./store.ts";
export { createPetStore } from "./store.ts";

// The adapter kit's names, kept here until 2.0: their home is petstore-lib/adapter.
/** The adapter kit's `AdapterStore`. @deprecated Import from "petstore-lib/adapter". */
export type AdapterStore = adapter.AdapterStore;
/** The adapter kit's `checkOptionNames`. @deprecated Import from "petstore-lib/adapter". */
export const checkOptionNames: typeof adapter.checkOptionNames = adapter.checkOptionNames;
/** The adapter kit's `isPromise`. @deprecated Import from "petstore-lib/adapter". */
export const isPromise: typeof adapter.isPromise = adapter.isPromise;
/** The adapter kit's `isUnderBasePath`. @deprecated Import from "petstore-lib/adapter". */
export const isUnderBasePath: typeof adapter.isUnderBasePath = adapter.isUnderBasePath;
/** The adapter kit's `REQUEST_HEADERS`. @deprecated Import from "petstore-lib/adapter". */
export const REQUEST_HEADERS: typeof adapter.REQUEST_HEADERS = adapter.REQUEST_HEADERS;
/** The adapter kit's `requestIdOf`. @deprecated Import from "petstore-lib/adapter". */
export const requestIdOf: typeof adapter.requestIdOf = adapter.requestIdOf;
