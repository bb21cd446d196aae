/**
 * Opens a storage from a URL-like string, as the standalone server's PETSTORE_STORAGE:
 * `memory`, `sqlite:<path>`, `redis://…`, `postgres://…`. Backend drivers are optional peer
 * dependencies, loaded only when asked for.
 */
import { memoryStorage } from "./memory.ts";
import type { PetStorage } from "./port.ts";

/** A storage that cannot be opened as configured (bad URL, driver missing, backend unreachable). */
export class StorageConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StorageConfigError";
  }
}

export interface OpenStorageOptions {
  /** Key prefix (Redis) or table-name prefix (SQL) that isolates this store's data. */
  namespace?: string;
  /** Time a backend call may take (ms, default 2000). */
  operationTimeoutMs?: number;
}

/** @example const storage = await openStorage(process.env.PETSTORE_STORAGE ?? "memory") */
export async function openStorage(spec: string, options: OpenStorageOptions = {}): Promise<PetStorage> {
  if (spec === "memory") return memoryStorage(options.namespace === undefined ? {} : { namespace: options.namespace });
  throw new StorageConfigError(
    `unknown storage ${JSON.stringify(spec)}: use memory, sqlite:<path>, redis://host:port or postgres://…`,
  );
}
