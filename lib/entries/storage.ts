/**
 * `petstore-lib/storage`: the storage backends, the port a backend implements, and the errors a
 * backend reports. Most applications need only `openStorage` (also at the root) or one backend:
 *
 * @example import { sqliteStorage } from "petstore-lib/storage";
 */
export type { BreakerOptions } from "../storage/breaker.ts";
export { InvalidRecordError, StorageWarning } from "../storage/failures.ts";
export type { MemoryStorageOptions } from "../storage/memory/index.ts";
export { memoryStorage } from "../storage/memory/index.ts";
export type { OpenStorageOptions } from "../storage/open.ts";
export { openStorage, StorageConfigError } from "../storage/open.ts";
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
} from "../storage/port.ts";
export type { PostgresStorageOptions } from "../storage/postgres/index.ts";
export { postgresStorage } from "../storage/postgres/index.ts";
export type { RedisStorageOptions } from "../storage/redis/index.ts";
export { redisStorage } from "../storage/redis/index.ts";
export type { SqliteStorageOptions } from "../storage/sqlite/index.ts";
export { sqliteStorage } from "../storage/sqlite/index.ts";
