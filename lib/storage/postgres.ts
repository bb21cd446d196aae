/**
 * Postgres storage: pet values in Keyv (@keyv/postgres, table `<table>_values`), and next to it
 * what Keyv cannot do: a sequence `<table>_id_seq` (capped at 2^53-1) and an index table
 * `<table>_index (id bigint primary key, status)` with an index on `(status, id)`, so a page is
 * one index range scan (O(log n + limit)) whatever the filter.
 *
 * Each store owns its pg pool, shared by Keyv and its own queries: @keyv/postgres would keep one
 * pool per URL for the whole process and end it for every store when one disconnects. The pool
 * fails fast (connect, query and statement time-outs) and reconnects by itself on the next call.
 */
import type { Pet } from "../schemas.ts";
import { redactUrl, StorageConfigError, unreachable } from "./config-error.ts";
import { loadDriver, requireFromDriver } from "./driver.ts";
import type { ListPage, PetData, PetStorage } from "./port.ts";
import {
  checkNewId,
  indexedId,
  petValues,
  readPet,
  readPets,
  sequenceExhausted,
  storageClosed,
  writePet,
} from "./values.ts";

type KeyvPostgresDriver = typeof import("@keyv/postgres");

/** The part of `pg` used here (its types are not a dependency). */
interface PgQueryable {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}
interface PgPool extends PgQueryable {
  connect(): Promise<PgQueryable & { release(error?: Error): void }>;
  end(): Promise<void>;
  on(event: "error", listener: (error: Error) => void): unknown;
}
interface PgModule {
  Pool: new (config: Record<string, unknown>) => PgPool;
}

export interface PostgresStorageOptions {
  /** `postgres://user:password@host:5432/database` (or `postgresql://…`; `?sslmode=…` and the like work). */
  url: string;
  /** Prefix of this store's table names (default "petstore"): lower-case letters, digits, `_`. */
  table?: string;
  /** Schema of the tables (default "public"). */
  schema?: string;
  /** Connect, query and statement time-out in ms (default 2000). */
  operationTimeoutMs?: number;
  /** Size of this store's connection pool (default 10). */
  maxConnections?: number;
}

const IDENTIFIER = /^[a-z][a-z0-9_]{0,39}$/;
const SEQUENCE_EXHAUSTED = "2200H";

function checkOptions(options: PostgresStorageOptions) {
  const url = options?.url;
  if (typeof url !== "string" || !/^postgres(ql)?:\/\//i.test(url) || !URL.canParse(url)) {
    throw new StorageConfigError(
      `postgres storage: url must look like postgres://user@host:5432/database (got ${JSON.stringify(redactUrl(String(url)))})`,
    );
  }
  const table = options.table ?? "petstore";
  const schema = options.schema ?? "public";
  for (const [name, value] of [
    ["table", table],
    ["schema", schema],
  ] as const) {
    if (!IDENTIFIER.test(value)) {
      throw new StorageConfigError(
        `postgres storage: ${name} must be 1 to 40 lower-case letters, digits or "_", starting with a letter (got ${JSON.stringify(value)})`,
      );
    }
  }
  const timeoutMs = options.operationTimeoutMs ?? 2000;
  const maxConnections = options.maxConnections ?? 10;
  for (const [name, value] of [
    ["operationTimeoutMs", timeoutMs],
    ["maxConnections", maxConnections],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new StorageConfigError(`postgres storage: ${name} must be a positive integer (got ${value})`);
    }
  }
  return { url, table, schema, timeoutMs, maxConnections };
}

/** Creates the tables, sequence and index if missing, one process at a time (concurrent DDL races otherwise). */
async function createSchema(pool: PgPool, schema: string, table: string): Promise<void> {
  const t = `${schema}.${table}`;
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`petstore:${t}`]);
    if (schema !== "public") await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    // The values table is @keyv/postgres's own layout.
    await client.query(`CREATE TABLE IF NOT EXISTS ${t}_values (key VARCHAR(255) PRIMARY KEY, value TEXT)`);
    await client.query(`CREATE SEQUENCE IF NOT EXISTS ${t}_id_seq AS bigint MAXVALUE 9007199254740991`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${t}_index (id bigint PRIMARY KEY, status text NOT NULL CHECK (status IN ('available', 'pending', 'sold')))`,
    );
    await client.query(`CREATE INDEX IF NOT EXISTS ${table}_index_status_id ON ${t}_index (status, id)`);
    await client.query("COMMIT");
    client.release();
  } catch (error) {
    client.release(error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
}

/**
 * Opens a Postgres storage; rejects with StorageConfigError when the driver is missing or the
 * server does not answer. @example await postgresStorage({ url: "postgres://app@db/shop", table: "pets_eu" })
 */
export async function postgresStorage(options: PostgresStorageOptions): Promise<PetStorage> {
  const { url, table, schema, timeoutMs, maxConnections } = checkOptions(options);
  const { default: KeyvPostgres } = await loadDriver<KeyvPostgresDriver>("@keyv/postgres", "postgres");
  const pg = requireFromDriver<PgModule>("@keyv/postgres", "pg", "postgres");

  const pool = new pg.Pool({
    connectionString: url,
    max: maxConnections,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    statement_timeout: timeoutMs,
    idleTimeoutMillis: 10_000,
    keepAlive: true,
    application_name: "petstore",
  });
  // An idle connection that breaks emits "error" on the pool; unheard, it would crash the process.
  pool.on("error", () => {});
  try {
    await createSchema(pool, schema, table);
  } catch (error) {
    await pool.end().catch(() => {});
    throw unreachable("postgres", url, 5432, error);
  }

  /** @keyv/postgres on this store's own pool; disconnecting it is this store's close, not the global pool's end. */
  class OwnPoolStore extends KeyvPostgres {
    override async connect() {
      return async (sql: string, params?: unknown[]) => (await pool.query(sql, params)).rows;
    }
    override async disconnect() {}
  }
  const store = new OwnPoolStore({ uri: url, table: `${table}_values`, schema });
  const values = petValues(store, { namespace: "pets", keyPrefix: true });
  const t = `${schema}.${table}`;
  let closing: Promise<void> | undefined;
  // A closed store refuses calls before they reach the driver (@keyv/redis would even reconnect).
  const ensureOpen = () => {
    if (closing !== undefined) throw storageClosed("postgres");
  };

  return {
    kind: "postgres",
    async create(data: PetData): Promise<Pet> {
      ensureOpen();
      let next: unknown;
      try {
        next = (await pool.query(`SELECT nextval('${t}_id_seq') AS id`)).rows[0]?.id;
      } catch (error) {
        if ((error as { code?: unknown }).code === SEQUENCE_EXHAUSTED) throw sequenceExhausted("postgres");
        throw error;
      }
      const id = checkNewId(Number(next), "postgres");
      const pet: Pet = { id, name: data.name, categoryId: data.categoryId, status: data.status };
      return writePet(values, pet, () =>
        pool.query(`INSERT INTO ${t}_index (id, status) VALUES ($1, $2)`, [id, pet.status]),
      );
    },
    async get(id: number): Promise<Pet | undefined> {
      ensureOpen();
      return readPet(
        id,
        "postgres",
        async () => (await pool.query(`SELECT 1 FROM ${t}_index WHERE id = $1`, [id])).rows.length > 0,
        () => values.get(String(id)),
      );
    },
    async list({ status, after, limit }: ListPage): Promise<Pet[]> {
      ensureOpen();
      const { rows } =
        status === undefined
          ? await pool.query(`SELECT id FROM ${t}_index WHERE id > $1 ORDER BY id LIMIT $2`, [after, limit])
          : await pool.query(`SELECT id FROM ${t}_index WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`, [
              status,
              after,
              limit,
            ]);
      return readPets(
        values,
        rows.map((row) => indexedId(row.id, "postgres")),
        "postgres",
      );
    },
    async ping() {
      ensureOpen();
      await pool.query("SELECT 1");
    },
    close() {
      closing ??= pool.end().catch(() => {});
      return closing;
    },
    /** Empties this store's own tables (`<table>_*` that it created) and restarts its sequence at 1, in one transaction. */
    async clear() {
      ensureOpen();
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const own = [`${table}_index`, `${table}_values`, `${table}_idempotency`];
        const { rows } = await client.query(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name = ANY($2)",
          [schema, own],
        );
        const tables = rows.map((row) => `${schema}.${String(row.table_name)}`);
        if (tables.length > 0) await client.query(`TRUNCATE ${tables.join(", ")}`);
        await client.query(`ALTER SEQUENCE ${t}_id_seq RESTART WITH 1`);
        await client.query("COMMIT");
        client.release();
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        client.release(error instanceof Error ? error : new Error(String(error)));
        throw error;
      }
    },
  };
}
