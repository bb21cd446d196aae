/**
 * Opens a storage from a URL-like string, as the standalone server's PETSTORE_STORAGE:
 * `memory`, `sqlite:<path>`, `redis://…` / `rediss://…`, `postgres://…` / `postgresql://…`,
 * each optionally ending in `?namespace=<name>` (Redis key prefix, SQL table-name prefix).
 * Backend drivers are optional peer dependencies, loaded only when asked for.
 */
import { redactUrl, StorageConfigError } from "./config-error.ts";
import { memoryStorage } from "./memory.ts";
import type { PetStorage } from "./port.ts";
import { postgresStorage } from "./postgres.ts";
import { redisStorage } from "./redis.ts";
import { sqliteStorage } from "./sqlite.ts";

export { StorageConfigError } from "./config-error.ts";

export interface OpenStorageOptions {
  /** Key prefix (Redis) or table-name prefix (SQL) that isolates this store's data; `?namespace=` in the spec wins. */
  namespace?: string;
  /** Time a backend call may take (ms, default 2000). */
  operationTimeoutMs?: number;
}

const USAGE =
  "use memory, sqlite:<path>, redis://host:6379, rediss://host:6380, postgres://user@host:5432/db or postgresql://…";

/** Takes `namespace=<name>` out of a URL's query; the rest of the URL is left as it was written. */
function splitNamespace(spec: string): { rest: string; namespace: string | undefined } {
  const match = /[?&]namespace=([^&#]*)/.exec(spec);
  if (match === null) return { rest: spec, namespace: undefined };
  let rest = spec.slice(0, match.index) + spec.slice(match.index + match[0].length);
  if (match[0].startsWith("?")) rest = rest.replace(/^([^?#]*)&/, "$1?");
  let namespace: string;
  try {
    namespace = decodeURIComponent(match[1] ?? "");
  } catch {
    namespace = match[1] ?? "";
  }
  return { rest, namespace };
}

/**
 * Opens the storage `spec` names; rejects with StorageConfigError (one clear line) for an unknown
 * scheme, a missing driver package or a backend that does not answer.
 *
 * @example const storage = await openStorage(process.env.PETSTORE_STORAGE ?? "memory")
 * @example await openStorage("redis://127.0.0.1:6379?namespace=shop-eu")
 */
export async function openStorage(spec: string, options: OpenStorageOptions = {}): Promise<PetStorage> {
  if (typeof spec !== "string") throw new StorageConfigError(`storage must be a string: ${USAGE}`);
  const timeout = options.operationTimeoutMs === undefined ? {} : { operationTimeoutMs: options.operationTimeoutMs };
  if (spec === "memory") return memoryStorage(options.namespace === undefined ? {} : { namespace: options.namespace });

  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(spec)?.[1]?.toLowerCase();
  const { rest, namespace: fromSpec } = splitNamespace(spec);
  const namespace = fromSpec ?? options.namespace;
  switch (scheme) {
    case "sqlite": {
      // sqlite:./pets.db, sqlite:/var/lib/pets.db, and as @keyv/sqlite reads them sqlite://./pets.db, sqlite:///var/lib/pets.db
      const path = rest.slice("sqlite:".length).replace(/^\/\//, "");
      if (path === "") throw new StorageConfigError(`storage "sqlite:" needs a file path, e.g. sqlite:./pets.db`);
      return sqliteStorage({ path, ...(namespace === undefined ? {} : { table: namespace }), ...timeout });
    }
    case "redis":
    case "rediss":
      return redisStorage({ url: rest, ...(namespace === undefined ? {} : { namespace }), ...timeout });
    case "postgres":
    case "postgresql":
      return postgresStorage({ url: rest, ...(namespace === undefined ? {} : { table: namespace }), ...timeout });
    default:
      throw new StorageConfigError(`unknown storage ${JSON.stringify(redactUrl(spec))}: ${USAGE}`);
  }
}
