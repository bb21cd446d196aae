/**
 * The query parameters a storage URL may carry, per scheme: ours (`namespace`, Redis's
 * `durability`) and, in a Postgres URL, the connection parameters pg reads from it. Any other is
 * refused, naming it: a typo (`?nmespace=shop`) would otherwise be ignored, or, in a SQLite path,
 * become part of the file's name.
 */
import { StorageConfigError } from "./config-error.ts";

/** The connection parameters pg (pg-connection-string) takes from a URL's query. */
const PG_PARAMS = [
  "sslmode",
  "ssl",
  "sslcert",
  "sslkey",
  "sslrootcert",
  "sslnegotiation",
  "uselibpqcompat",
  "application_name",
  "fallback_application_name",
  "options",
  "client_encoding",
  "statement_timeout",
  "lock_timeout",
  "idle_in_transaction_session_timeout",
  "query_timeout",
  "replication",
  "binary",
  "host",
  "port",
  "user",
  "password",
];

const ACCEPTED: Record<string, readonly string[]> = {
  sqlite: ["namespace"],
  redis: ["namespace", "durability"],
  postgres: ["namespace", ...PG_PARAMS],
};

/** The scheme's family: `rediss+cluster` is `redis`, `postgresql` is `postgres`. */
function familyOf(scheme: string): string {
  if (scheme.startsWith("redis")) return "redis";
  if (scheme.startsWith("postgres")) return "postgres";
  return scheme;
}

/** The names of the query's parameters, as written (`a=1&b` gives a, b). */
function paramNames(spec: string): string[] {
  const at = spec.indexOf("?");
  if (at === -1) return [];
  const query = spec.slice(at + 1).split("#")[0] ?? "";
  return query
    .split("&")
    .filter((part) => part !== "")
    .map((part) => part.split("=")[0] ?? "");
}

/**
 * Throws StorageConfigError for the first query parameter `scheme` does not take, naming it and
 * the ones it takes; a scheme of no known family passes (its own error comes later).
 *
 * @example checkUrlParams("redis://h:6379?nmespace=shop", "redis") // throws: unknown parameter "nmespace" …
 */
export function checkUrlParams(spec: string, scheme: string): void {
  const family = familyOf(scheme);
  const accepted = ACCEPTED[family];
  if (accepted === undefined) return;
  const unknown = paramNames(spec).find((name) => !accepted.includes(name));
  if (unknown === undefined) return;
  const takes =
    family === "postgres" ? `namespace and pg's connection parameters (${PG_PARAMS.join(", ")})` : accepted.join(", ");
  // A cluster's form is the usual surprise (no database, hosts in the authority): say it first.
  const form = scheme.endsWith("+cluster")
    ? "a cluster is redis+cluster://host:port,host:port (rediss+cluster:// for TLS): "
    : "";
  throw new StorageConfigError(
    `storage URL: ${form}unknown query parameter ${JSON.stringify(unknown)}; a ${family} URL takes ${takes}`,
  );
}
