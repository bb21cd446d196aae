/**
 * `petstore-lib`: the Pet Store core. `createPetStore({ storage, auth })` gives the spec's
 * operations as plain async functions and `respond(request)` / `handle(request)`, the whole HTTP
 * contract without an HTTP framework. Every name here is public API until 2.0; adapters (ours
 * and anyone's) are built from these and the kit of `petstore-lib/adapter` alone.
 */
import * as adapter from "./adapter.ts";

export type { JwtOptions, JwtVerifier } from "./auth/jwt.ts";
export { jwt } from "./auth/jwt.ts";
export type { ApiKey } from "./auth/keys.ts";
export { apiKeys } from "./auth/keys.ts";
export type { AuthOption, AuthSettings } from "./auth/option.ts";
export type { Principal, Scope, Verdict, VerifyToken } from "./auth/principal.ts";
export { SCOPES } from "./auth/principal.ts";
export type { AuthThrottledObservation, FailureLimitOptions } from "./auth/throttle.ts";
export type { Awaitable } from "./awaitable.ts";
export type { CacheControlOptions } from "./cache-control.ts";
export type { CorsOptions } from "./cors.ts";
export type { AnyErrorCode, ErrorBody, ErrorCode, ErrorDetail } from "./errors.ts";
export { ERRORS, isPetStoreError, PetStoreError } from "./errors.ts";
export type { BodyReader, HeaderValue, PetStoreRequest, PetStoreResponse } from "./http.ts";
export type { IdempotentCreateOptions } from "./idempotency.ts";
export { DEFAULT_IDEMPOTENCY_TTL_MS, scopeOf } from "./idempotency.ts";
export type { HeadersLike, ResponseLike } from "./next-cursor.ts";
export { nextCursor } from "./next-cursor.ts";
export type {
  BreakerObservation,
  InvalidRecordObservation,
  Observation,
  Observer,
  RateLimitObservation,
  RequestObservation,
  StorageObservation,
  StorageOperation,
} from "./observe.ts";
export type { OpenApiDocument, OpenApiOptions } from "./openapi.ts";
export { buildOpenApi } from "./openapi.ts";
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
export type { CheckedNewPet } from "./schemas.ts";
export {
  DEFAULT_DEPRECATED_AT,
  DEFAULT_SUNSET_AT,
  ErrorSchema,
  ListQuery,
  NewPet,
  PET_STATUSES,
  Pet,
  PetStatus,
  Pets,
} from "./schemas.ts";
export type { BreakerOptions } from "./storage/breaker.ts";
export { InvalidRecordError, StorageWarning } from "./storage/failures.ts";
export type { MemoryStorageOptions } from "./storage/memory/index.ts";
export { memoryStorage } from "./storage/memory/index.ts";
export type { OpenStorageOptions } from "./storage/open.ts";
export { openStorage, StorageConfigError } from "./storage/open.ts";
export type {
  CreateOnceResult,
  IdempotencyRecord,
  ImportMark,
  KeyRecord,
  ListPage,
  PetData,
  PetStorage,
  RateCounter,
  RateLease,
  StorageTransfer,
} from "./storage/port.ts";
export type { PostgresStorageOptions } from "./storage/postgres/index.ts";
export { postgresStorage } from "./storage/postgres/index.ts";
export type { RedisStorageOptions } from "./storage/redis/index.ts";
export { redisStorage } from "./storage/redis/index.ts";
export type { SqliteStorageOptions } from "./storage/sqlite/index.ts";
export { sqliteStorage } from "./storage/sqlite/index.ts";
export type { Handle, PetStore, PetStoreOptions, Respond } from "./store.ts";
export { createPetStore } from "./store.ts";
export type { TracerProviderLike } from "./tracer-provider.ts";

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
