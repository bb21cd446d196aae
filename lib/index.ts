/**
 * The Pet Store core: `createPetStore({ storage, auth })` gives the spec's operations as
 * plain async functions and `handle(request)`, the whole HTTP contract without any HTTP
 * framework. Adapters (adapters/node-http, adapters/hapi) only translate to and from it.
 */
import type { AuthOption } from "./auth.ts";
import { toVerifier } from "./auth.ts";
import type { AnswerNow, Handle } from "./handler.ts";
import { ANSWER_NOW, createHandler } from "./handler.ts";
import { openApiRoute } from "./openapi.ts";
import type { Operations } from "./operations.ts";
import { createOperations, guardStorage } from "./operations.ts";
import { DEFAULT_DEPRECATED_AT, DEFAULT_SUNSET_AT } from "./schemas.ts";
import { memoryStorage } from "./storage/memory.ts";
import type { PetStorage } from "./storage/port.ts";

export interface PetStoreOptions {
  /** Where pets live. Default: `memoryStorage()`. */
  storage?: PetStorage;
  /** Required: a list of API keys, `apiKeys([...])`, or a verify function `(token) => boolean`. */
  auth: AuthOption;
  /** Base path of every route (default "/v1"). */
  basePath?: string;
  /** Largest accepted request body in bytes (default 65536). */
  maxBodyBytes?: number;
  /** Time a storage call may take before it answers 503 storage_unavailable (default 2000 ms). */
  operationTimeoutMs?: number;
  /** When getPet was deprecated (the `Deprecation` header). Default 2026-11-25. */
  deprecatedAt?: Date;
  /** When getPet goes away (the `Sunset` header). Default 2030-12-05. */
  sunsetAt?: Date;
  /** Called with every unexpected error (answered 500) and every invalid stored value. */
  onError?: (error: unknown) => void;
}

export interface PetStore extends Operations {
  /** Answers one HTTP-neutral request; never rejects. */
  handle: Handle;
  /** @internal The same answer, without a promise when nothing had to wait (for this package's adapters). */
  readonly [ANSWER_NOW]?: AnswerNow;
  /** True when the storage answers (for readiness probes). */
  ready(): Promise<boolean>;
  /** Closes the storage. Idempotent. */
  close(): Promise<void>;
  readonly basePath: string;
  readonly maxBodyBytes: number;
}

function checkBasePath(basePath: string): string {
  if (basePath === "" || basePath === "/") return "";
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(basePath)) {
    throw new TypeError(`createPetStore: basePath must look like "/v1" (got ${JSON.stringify(basePath)})`);
  }
  return basePath;
}

function checkPositive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`createPetStore: ${name} must be a positive integer (got ${value})`);
  }
  return value;
}

/**
 * Creates a pet store.
 *
 * @example
 *   const store = createPetStore({ auth: ["my-key"] });
 *   const pet = await store.createPet({ name: "Rex", categoryId: 1 });
 *   const res = await store.handle({ method: "GET", path: "/v1/pets", headers: { authorization: "Bearer my-key" } });
 */
export function createPetStore(options: PetStoreOptions): PetStore {
  if (options === null || typeof options !== "object") throw new TypeError("createPetStore: options are required");
  const verify = toVerifier(options.auth);
  const storage = options.storage ?? memoryStorage();
  const basePath = checkBasePath(options.basePath ?? "/v1");
  const maxBodyBytes = checkPositive("maxBodyBytes", options.maxBodyBytes ?? 64 * 1024);
  const timeoutMs = checkPositive("operationTimeoutMs", options.operationTimeoutMs ?? 2000);
  const onError = options.onError ?? ((error: unknown) => console.error("petstore: unexpected error", error));
  const ops = createOperations(storage, timeoutMs);
  const { handle, answerNow } = createHandler(ops, {
    basePath,
    maxBodyBytes,
    verify,
    deprecatedAt: Math.floor((options.deprecatedAt ?? DEFAULT_DEPRECATED_AT).getTime() / 1000),
    sunset: options.sunsetAt ?? DEFAULT_SUNSET_AT,
    onError: (error) => onError(error),
    stablePets: storage.inProcess === true,
    publicRoutes: {
      "openapi.json": openApiRoute({ basePath, deprecatedAt: options.deprecatedAt, sunsetAt: options.sunsetAt }),
    },
  });
  let closing: Promise<void> | undefined;

  return {
    listPets: (query) => ops.listPets(query),
    createPet: (input) => ops.createPet(input),
    getPet: (id) => ops.getPet(id),
    handle,
    [ANSWER_NOW]: answerNow,
    basePath,
    maxBodyBytes,
    async ready() {
      try {
        await guardStorage(timeoutMs)(() => storage.ping());
        return true;
      } catch {
        return false;
      }
    },
    close() {
      closing ??= storage.close();
      return closing;
    },
  };
}

export type { AuthOption, VerifyToken } from "./auth.ts";
export { apiKeys } from "./auth.ts";
export type { ErrorBody, ErrorCode, ErrorDetail } from "./errors.ts";
export { ERRORS, isPetStoreError, PetStoreError } from "./errors.ts";
export type { BodyReader, PetStoreRequest, PetStoreResponse } from "./handler.ts";
export { requestIdOf } from "./handler.ts";
export type { OpenApiOptions } from "./openapi.ts";
export { buildOpenApi } from "./openapi.ts";
export type { ListPetsInput, Operations, PetPage } from "./operations.ts";
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
export type { ListPage, PetData, PetStorage } from "./storage/port.ts";
export type { PostgresStorageOptions } from "./storage/postgres.ts";
export { postgresStorage } from "./storage/postgres.ts";
export type { RedisStorageOptions } from "./storage/redis.ts";
export { redisStorage } from "./storage/redis.ts";
export type { SqliteStorageOptions } from "./storage/sqlite.ts";
export { sqliteStorage } from "./storage/sqlite.ts";
