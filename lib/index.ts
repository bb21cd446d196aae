/**
 * The Pet Store core: `createPetStore({ storage, auth })` gives the spec's operations as plain
 * async functions and `handle(request)` / `respond(request)`, the whole HTTP contract without any
 * HTTP framework. Adapters (adapters/*) are built only from what this file exports.
 */
export type { AuthOption, VerifyToken } from "./auth.ts";
export { apiKeys } from "./auth.ts";
export type { Awaitable } from "./awaitable.ts";
export { isPromise } from "./awaitable.ts";
export type { AnyErrorCode, ErrorBody, ErrorCode, ErrorDetail } from "./errors.ts";
export { ERRORS, isPetStoreError, PetStoreError } from "./errors.ts";
export { lowerCaseHeaders, requestIdOf } from "./handler.ts";
export type { BodyReader, HeaderValue, PetStoreRequest, PetStoreResponse } from "./http.ts";
export { REQUEST_HEADERS } from "./http.ts";
export type { IdempotentCreateOptions } from "./idempotency.ts";
export { DEFAULT_IDEMPOTENCY_TTL_MS, scopeOf } from "./idempotency.ts";
export type { JsonText } from "./json.ts";
export { jsonString } from "./json.ts";
export type {
  Observation,
  Observer,
  RequestObservation,
  StorageObservation,
  StorageOperation,
} from "./observe.ts";
export type { OpenApiOptions } from "./openapi.ts";
export { buildOpenApi } from "./openapi.ts";
export type {
  CreateContext,
  CreatedPet,
  ListPetsInput,
  NewPetInput,
  Operations,
  PetPage,
} from "./operations.ts";
export { BASE_PATH_PATTERN, REQUEST_ID_PATTERN } from "./patterns.ts";
export { errorResponse, JSON_TYPE, jsonResponse, responseHeaders } from "./response.ts";
export type {
  CheckedNewPet,
  PetStoreRules,
  RuleCodeDeclaration,
  RuleContext,
  RuleStatus,
} from "./rules.ts";
export { isRuleViolation, RULE_CODE_PATTERN, RuleViolation } from "./rules.ts";
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
export type { MemoryStorageOptions } from "./storage/memory.ts";
export { memoryStorage } from "./storage/memory.ts";
export type { OpenStorageOptions } from "./storage/open.ts";
export { openStorage, StorageConfigError } from "./storage/open.ts";
export type { CreateOnceResult, IdempotencyRecord, ListPage, PetData, PetStorage } from "./storage/port.ts";
export type { PostgresStorageOptions } from "./storage/postgres.ts";
export { postgresStorage } from "./storage/postgres.ts";
export type { RedisStorageOptions } from "./storage/redis.ts";
export { redisStorage } from "./storage/redis.ts";
export type { SqliteStorageOptions } from "./storage/sqlite.ts";
export { sqliteStorage } from "./storage/sqlite.ts";
export type { Handle, PetStore, PetStoreOptions, Respond } from "./store.ts";
export { createPetStore } from "./store.ts";
