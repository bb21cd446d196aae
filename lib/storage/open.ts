/**
 * Opens a storage from a URL-like string, as the standalone server's PETSTORE_STORAGE: `memory`,
 * `sqlite:<path>`, `redis://…` / `rediss://…`, `redis+cluster://host:port,host:port` /
 * `rediss+cluster://…`, `postgres://…` / `postgresql://…`, each optionally ending in
 * `?namespace=<name>` (Redis key prefix, SQL table-name prefix); Redis also takes `durability=`.
 * Backend drivers are optional peer dependencies, loaded only when asked for.
 */
import { redactUrl, StorageConfigError } from "./config-error.ts";
import { memoryStorage } from "./memory/index.ts";
import type { PetStorage } from "./port.ts";
import { postgresStorage } from "./postgres/index.ts";
import { redisStorage } from "./redis/index.ts";
import { sqliteStorage } from "./sqlite/index.ts";
import { checkUrlParams } from "./url-params.ts";

export { StorageConfigError } from "./config-error.ts";

export interface OpenStorageOptions {
  /** Key prefix (Redis) or table-name prefix (SQL) that isolates this store's data; `?namespace=` in the spec wins. */
  namespace?: string;
  /** Time a backend call may take (ms, default 2000). */
  operationTimeoutMs?: number;
}

const USAGE =
  "use memory, sqlite:<path>, redis://host:6379, rediss://host:6380, redis+cluster://host:6379,host:6380, " +
  "postgres://user@host:5432/db or postgresql://…";

/** The SQL backends' rule for a table prefix, checked here to name the setting the user wrote: `namespace`. */
const SQL_NAMESPACE = /^[a-z][a-z0-9_]{0,39}$/;

function checkSqlNamespace(namespace: string | undefined): void {
  if (namespace !== undefined && !SQL_NAMESPACE.test(namespace)) {
    throw new StorageConfigError(
      `storage namespace must be 1 to 40 lower-case letters, digits or "_", starting with a letter, as it prefixes SQL table names (got ${JSON.stringify(namespace)})`,
    );
  }
}

/** Takes `<name>=<value>` out of a URL's query; the rest of the URL is left as it was written. */
function splitParam(spec: string, name: string): { rest: string; value: string | undefined } {
  const match = new RegExp(`[?&]${name}=([^&#]*)`).exec(spec);
  if (match === null) return { rest: spec, value: undefined };
  let rest = spec.slice(0, match.index) + spec.slice(match.index + match[0].length);
  if (match[0].startsWith("?")) rest = rest.replace(/^([^?#]*)&/, "$1?");
  let value: string;
  try {
    value = decodeURIComponent(match[1] ?? "");
  } catch {
    value = match[1] ?? "";
  }
  return { rest, value };
}

/**
 * The root node URLs of `redis+cluster://[user:password@]host:port,host:port[/0]` (`rediss+…`:
 * TLS): one `redis://` URL per host, each with the credentials.
 * @example clusterNodes("redis+cluster://a:7000,b:7001") // ["redis://a:7000", "redis://b:7001"]
 */
function clusterNodes(spec: string): string[] {
  const match = /^(rediss?)\+cluster:\/\/([^/?#]*)([^?#]*)(.*)$/i.exec(spec);
  const [, scheme = "", authority = "", path = "", query = ""] = match ?? [];
  const at = authority.lastIndexOf("@");
  const credentials = authority.slice(0, at + 1);
  const hosts = authority.slice(at + 1).split(",");
  if (match === null || query !== "" || hosts.some((host) => host === "")) {
    throw new StorageConfigError(
      `storage ${JSON.stringify(redactUrl(spec))}: a cluster is redis+cluster://host:port,host:port ` +
        "(rediss+cluster:// for TLS), optionally with ?namespace=<name>&durability=replicated",
    );
  }
  return hosts.map((host) => `${scheme.toLowerCase()}://${credentials}${host}${path}`);
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
  checkUrlParams(spec, scheme ?? "");
  const { rest, value: fromSpec } = splitParam(spec, "namespace");
  const namespace = fromSpec ?? options.namespace;
  const named = namespace === undefined ? {} : { namespace };
  switch (scheme) {
    case "sqlite": {
      // sqlite:./pets.db, sqlite:/var/lib/pets.db, and as @keyv/sqlite reads them sqlite://./pets.db, sqlite:///var/lib/pets.db
      const path = rest.slice("sqlite:".length).replace(/^\/\//, "");
      if (path === "") throw new StorageConfigError(`storage "sqlite:" needs a file path, e.g. sqlite:./pets.db`);
      checkSqlNamespace(namespace);
      return sqliteStorage({ path, ...(namespace === undefined ? {} : { table: namespace }), ...timeout });
    }
    case "redis":
    case "rediss":
    case "redis+cluster":
    case "rediss+cluster": {
      const { rest: target, value: durability } = splitParam(rest, "durability");
      const where = scheme.endsWith("+cluster")
        ? { cluster: { rootNodes: clusterNodes(target).map((url) => ({ url })) } }
        : { url: target };
      const durable = durability === undefined ? {} : { durability: durability as "async" | "replicated" };
      return redisStorage({ ...where, ...named, ...timeout, ...durable });
    }
    case "postgres":
    case "postgresql":
      checkSqlNamespace(namespace);
      return postgresStorage({ url: rest, ...(namespace === undefined ? {} : { table: namespace }), ...timeout });
    default:
      throw new StorageConfigError(`unknown storage ${JSON.stringify(redactUrl(spec))}: ${USAGE}`);
  }
}
