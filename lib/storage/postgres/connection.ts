/**
 * Postgres storage, its connections: each store owns a pg pool, shared by Keyv and its own queries
 * (@keyv/postgres would keep one pool per URL for the whole process and end it for every store
 * when one disconnects). The pool fails fast (connect, query and statement time-outs) and
 * reconnects by itself on the next call. Also the schema, created when missing, and named statements.
 */
import { sha1Hex } from "../../digest.ts";
import type { PgNamedQuery, PgResult, RawPool } from "./read-timeout.ts";
import { sendQuery } from "./read-timeout.ts";

export type { PgNamedQuery } from "./read-timeout.ts";

/**
 * Why Postgres refused a value, when its error's SQLSTATE says so (class 22, data exception; class
 * 23, integrity constraint): `failures.ts`'s `blamed`. Undefined for anything else.
 */
export function postgresBlamesValue(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^2[23][0-9A-Z]{3}$/.test(code)
    ? `Postgres refused a value (SQLSTATE ${code})`
    : undefined;
}

/** SQLSTATE 23505: a key already taken. */
export const UNIQUE_VIOLATION = "23505";

/** The part of `pg` used here (its types are not a dependency). */
interface PgQueryable {
  query(sql: string | PgNamedQuery, params?: unknown[]): Promise<PgResult>;
}
/** A connection of the pool, out of it until `release` (with an error: destroyed). */
export interface PgClient extends PgQueryable {
  release(error?: Error): void;
}
export interface PgPool extends PgQueryable {
  connect(): Promise<PgClient>;
  end(): Promise<void>;
}
export interface PgModule {
  Pool: new (config: Record<string, unknown>) => RawPool;
}

const ignore = () => {};

/** sendQuery's callback settling a promise with the answer or the failure. */
const settling =
  (resolve: (result: PgResult) => void, reject: (error: Error) => void) =>
  (failure: Error | undefined, result?: PgResult) =>
    failure === undefined ? resolve(result as PgResult) : reject(failure);

/** pg-pool's callback's error: `undefined` or `null` when there is none. */
const failed = (error: Error | null | undefined): error is Error => error !== undefined && error !== null;

/**
 * This store's own pool: `maxConnections` connections, waiting at most `timeoutMs` for one, each
 * statement cancelled by the server past `timeoutMs`, and each query failing when no answer came
 * within `timeoutMs` (./read-timeout.ts: its connection is then destroyed).
 */
export function openPool(pg: PgModule, url: string, timeoutMs: number, maxConnections: number): PgPool {
  const pool = new pg.Pool({
    connectionString: url,
    max: maxConnections,
    connectionTimeoutMillis: timeoutMs,
    statement_timeout: timeoutMs,
    idleTimeoutMillis: 10_000,
    keepAlive: true,
    application_name: "petstore",
  });
  // An idle connection that breaks emits "error" on the pool; unheard, it would crash the process.
  pool.on("error", ignore);
  return {
    query: (sql, params) =>
      new Promise<PgResult>((resolve, reject) =>
        pool.connect((error, client) => {
          if (failed(error)) return reject(error);
          sendQuery(client, sql, params, timeoutMs, true, settling(resolve, reject));
        }),
      ),
    connect: () =>
      new Promise<PgClient>((resolve, reject) =>
        pool.connect((error, client) => {
          if (failed(error)) return reject(error);
          // Between its queries too, a lost connection's "error" must be heard while the client is out.
          client.on("error", ignore);
          resolve({
            query: (sql, params) =>
              new Promise<PgResult>((done, fail) =>
                sendQuery(client, sql, params, timeoutMs, false, settling(done, fail)),
              ),
            release(failure?: Error) {
              client.removeListener("error", ignore);
              client.release(failure);
            },
          });
        }),
      ),
    end: () => pool.end(),
  };
}

/** Creates the tables, sequence and index if missing, one process at a time (concurrent DDL races otherwise). */
export async function createSchema(pool: PgPool, schema: string, table: string): Promise<void> {
  const qualified = `${schema}.${table}`;
  const client = await pool.connect();
  try {
    // When everything exists, no DDL at all: even an "IF NOT EXISTS" takes table locks, which
    // would deadlock with other processes' creates (one statement writes three tables).
    const names = [
      `${qualified}_values`,
      `${qualified}_id_seq`,
      `${qualified}_index`,
      `${schema}.${table}_index_status_id`,
      `${qualified}_idempotency`,
    ];
    names.push(`${schema}.${table}_idempotency_expires_at`, `${qualified}_rate`, `${qualified}_meta`);
    const { rows } = await client.query(
      "SELECT bool_and(to_regclass(name) IS NOT NULL) AS ready FROM unnest($1::text[]) AS name",
      [names],
    );
    if (rows[0]?.ready === true) {
      client.release();
      return;
    }
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`petstore:${qualified}`]);
    if (schema !== "public") await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    // The values table is @keyv/postgres's own layout.
    await client.query(`CREATE TABLE IF NOT EXISTS ${qualified}_values (key VARCHAR(255) PRIMARY KEY, value TEXT)`);
    await client.query(`CREATE SEQUENCE IF NOT EXISTS ${qualified}_id_seq AS bigint MAXVALUE 9007199254740991`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${qualified}_index (id bigint PRIMARY KEY, status text NOT NULL CHECK (status IN ('available', 'pending', 'sold')))`,
    );
    await client.query(`CREATE INDEX IF NOT EXISTS ${table}_index_status_id ON ${qualified}_index (status, id)`);
    // Keys are only ever compared for equality: byte order ("C") spares every look-up and insert
    // of the primary key the database's collation (strcoll under a libc locale such as C.UTF-8).
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${qualified}_idempotency (scope text COLLATE "C" NOT NULL, key text COLLATE "C" NOT NULL, fingerprint text NOT NULL, pet_id bigint NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (scope, key))`,
    );
    await client.query(
      `CREATE INDEX IF NOT EXISTS ${table}_idempotency_expires_at ON ${qualified}_idempotency (expires_at)`,
    );
    // The rate limits' counts: one row per caller and window (postgres/rate.ts).
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${qualified}_rate (scope text COLLATE "C" NOT NULL, win bigint NOT NULL, used bigint NOT NULL, granted bigint NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (scope, win))`,
    );
    // What the store says of itself, by name: an unfinished import's mark (postgres/transfer.ts).
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${qualified}_meta (name text COLLATE "C" PRIMARY KEY, value text NOT NULL)`,
    );
    await client.query("COMMIT");
    client.release();
  } catch (error) {
    client.release(error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
}

/** A statement prepared once per connection, under a name derived from its text: `values` → the query to run. */
export function nameStatement(text: string): (values: unknown[]) => PgNamedQuery {
  const name = `petstore_${sha1Hex(text).slice(0, 20)}`;
  return (values: unknown[]): PgNamedQuery => ({ name, text, values });
}
