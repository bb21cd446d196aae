/**
 * Postgres storage: pet values in Keyv's table (@keyv/postgres, `<table>_values`, Keyv's format),
 * and next to it what Keyv cannot do: a sequence `<table>_id_seq` (capped at 2^53-1) and an index
 * table `<table>_index (id bigint primary key, status)` with an index on `(status, id)`. A page
 * is one prepared statement: the index range (O(log n + limit) whatever the filter) and each pet's
 * value by its primary key.
 *
 * Each store owns its pg pool, shared by Keyv and its own queries: @keyv/postgres would keep one
 * pool per URL for the whole process and end it for every store when one disconnects. The pool
 * fails fast (connect, query and statement time-outs) and reconnects by itself on the next call.
 *
 * A create is one prepared statement, so one round trip and one transaction: the next id, the
 * value (Keyv's row and format) and the index entry. An idempotent one also takes an advisory lock
 * on the key (not free: another call is writing it, `in_use`) and writes the key record
 * (`<table>_idempotency`, unique on scope + key) with the pet, or nothing when an unexpired record
 * exists; that record is then read in a second statement.
 */
import { createHash } from "node:crypto";
import type { Pet, PetStatus } from "../schemas.ts";
import { PET_STATUSES } from "../schemas.ts";
import { redactUrl, StorageConfigError, unreachable } from "./config-error.ts";
import { loadDriver, requireFromDriver } from "./driver.ts";
import type { CreateOnceResult, IdempotencyRecord, ListPage, PetData, PetStorage } from "./port.ts";
import {
  checkNewId,
  indexedId,
  petValues,
  readPet,
  sequenceExhausted,
  serializedPetAround,
  storageClosed,
  storedPet,
} from "./values.ts";

type KeyvPostgresDriver = typeof import("@keyv/postgres");

/** A statement pg prepares once a connection (by `name`) and then only executes. */
interface PgNamedQuery {
  name: string;
  text: string;
  values: unknown[];
}

/** The part of `pg` used here (its types are not a dependency). */
interface PgQueryable {
  query(sql: string | PgNamedQuery, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
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
/** Expired idempotency records are deleted at most this often (by the writes' clock), this many at a time. */
const SWEEP_EVERY_MS = 60_000;
const SWEEP_BATCH = 500;

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
    // When everything exists, no DDL at all: even an "IF NOT EXISTS" takes table locks, which
    // would deadlock with other processes' creates (one statement writes three tables).
    const names = [
      `${t}_values`,
      `${t}_id_seq`,
      `${t}_index`,
      `${schema}.${table}_index_status_id`,
      `${t}_idempotency`,
    ];
    names.push(`${schema}.${table}_idempotency_expires_at`);
    const { rows } = await client.query(
      "SELECT bool_and(to_regclass(name) IS NOT NULL) AS ready FROM unnest($1::text[]) AS name",
      [names],
    );
    if (rows[0]?.ready === true) {
      client.release();
      return;
    }
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
    // Keys are only ever compared for equality: byte order ("C") spares every look-up and insert
    // of the primary key the database's collation (strcoll under a libc locale such as C.UTF-8).
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${t}_idempotency (scope text COLLATE "C" NOT NULL, key text COLLATE "C" NOT NULL, fingerprint text NOT NULL, pet_id bigint NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (scope, key))`,
    );
    await client.query(`CREATE INDEX IF NOT EXISTS ${table}_idempotency_expires_at ON ${t}_idempotency (expires_at)`);
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

  const k = `${t}_idempotency`;
  /** A statement prepared once a connection, under a name derived from its text. */
  const prepared = (text: string) => {
    const name = `petstore_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
    return (values: unknown[]): PgNamedQuery => ({ name, text, values });
  };
  /**
   * A create in one statement, so one round trip and one transaction: the next id, the value
   * (Keyv's row and format) and the index entry, from `source`. The idempotent create adds the
   * key's record, written only when the key's advisory lock is free and no unexpired record exists.
   * $1/$2 the value's text around the id, $3 status; then $4 scope, $5 key, $6 fingerprint, $7 now, $8 expires at.
   */
  const createSql = (once: boolean) => {
    const steps = once
      ? `lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended('petstore-key ' || $4::text || ' ' || $5::text, 0)) AS got),
  pet AS (SELECT nextval('${t}_id_seq') AS id FROM lock
    WHERE got AND NOT EXISTS (SELECT 1 FROM ${k} WHERE scope = $4 AND key = $5 AND expires_at > $7)),
  made AS (INSERT INTO ${k} (scope, key, fingerprint, pet_id, expires_at) SELECT $4, $5, $6, id, $8 FROM pet
    ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, pet_id = excluded.pet_id, expires_at = excluded.expires_at
    WHERE ${k}.expires_at <= $7
    RETURNING pet_id AS id)`
      : `made AS (SELECT nextval('${t}_id_seq') AS id)`;
    return prepared(`WITH ${steps},
  val AS (INSERT INTO ${t}_values (key, value) SELECT 'pets:' || id, $1::text || id || $2::text FROM made),
  idx AS (INSERT INTO ${t}_index (id, status) SELECT id, $3 FROM made)
  SELECT (SELECT id FROM made) AS created`);
  };
  const createStatement = createSql(false);
  const createOnceStatement = createSql(true);
  /**
   * One statement a page: the index range, and for each of its rows Keyv's value (null when
   * missing). A subquery a row rather than a join, and the status and the limit written into the
   * statement (both are checked values: a PetStatus, an integer of at most 101), only the cursor a
   * parameter: the plan of a prepared statement is then an index range and one primary-key look-up
   * a pet whatever the cursor, where a generic plan with them as parameters could filter the whole
   * id index for a rare status, or plan a hash join over the whole values table, and pass the cost
   * at which Postgres compiles the query (JIT, 10 ms a call). At most 4 × 101 statements a connection.
   */
  const pages = new Map<string, (values: unknown[]) => PgNamedQuery>();
  const pageStatement = (status: PetStatus | undefined, limit: number) => {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000)
      throw new Error(`postgres storage: bad page size ${limit}`);
    if (status !== undefined && !PET_STATUSES.includes(status)) throw new Error("postgres storage: bad status");
    const name = `${status ?? ""}${limit}`;
    let statement = pages.get(name);
    if (statement === undefined) {
      const where = status === undefined ? "i.id > $1" : `i.status = '${status}' AND i.id > $1`;
      statement = prepared(
        `SELECT i.id, (SELECT v.value FROM ${t}_values v WHERE v.key = 'pets:' || i.id) AS value FROM ${t}_index i WHERE ${where} ORDER BY i.id LIMIT ${limit}`,
      );
      pages.set(name, statement);
    }
    return statement;
  };
  /** Runs a create statement: the id it created, or undefined when it wrote nothing. */
  const create = async (statement: PgNamedQuery): Promise<number | undefined> => {
    let row: Record<string, unknown> | undefined;
    try {
      row = (await pool.query(statement)).rows[0];
    } catch (error) {
      if ((error as { code?: unknown }).code === SEQUENCE_EXHAUSTED) throw sequenceExhausted("postgres");
      throw error;
    }
    return row?.created === null || row?.created === undefined
      ? undefined
      : checkNewId(Number(row.created), "postgres");
  };
  let sweptAt = Number.NEGATIVE_INFINITY;
  /** Deletes a batch of expired idempotency records when the last sweep is a minute old (by the writes' clock). */
  const sweep = async (now: number): Promise<void> => {
    if (now - sweptAt < SWEEP_EVERY_MS) return;
    sweptAt = now;
    await pool
      .query(
        `DELETE FROM ${k} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${k} WHERE expires_at <= $1 LIMIT ${SWEEP_BATCH}))`,
        [now],
      )
      .catch(() => {});
  };

  /** What an unexpired record of the key gives: its pet (a replay) or `reused`; undefined without one. */
  const replayOf = async ({
    scope,
    key,
    fingerprint,
    now,
  }: IdempotencyRecord): Promise<CreateOnceResult | undefined> => {
    const found = (
      await pool.query(`SELECT fingerprint, pet_id FROM ${k} WHERE scope = $1 AND key = $2 AND expires_at > $3`, [
        scope,
        key,
        now,
      ])
    ).rows[0];
    if (found === undefined) return undefined;
    if (found.fingerprint !== fingerprint) return { conflict: "reused" };
    const id = Number(found.pet_id);
    const raw = (await pool.query(`SELECT value FROM ${t}_values WHERE key = $1`, [`pets:${id}`])).rows[0];
    return { pet: storedPet(id, raw?.value, values, "postgres"), replayed: true };
  };

  return {
    kind: "postgres",
    async findOnce(record: IdempotencyRecord): Promise<CreateOnceResult | undefined> {
      ensureOpen();
      return replayOf(record);
    },
    async createOnce(data: PetData, record: IdempotencyRecord): Promise<CreateOnceResult> {
      ensureOpen();
      const { scope, key, fingerprint, now, expiresAt } = record;
      const [head, tail] = serializedPetAround(values, data);
      const id = await create(createOnceStatement([head, tail, data.status, scope, key, fingerprint, now, expiresAt]));
      await sweep(now);
      if (id !== undefined) {
        return { pet: { id, name: data.name, categoryId: data.categoryId, status: data.status }, replayed: false };
      }
      // Nothing written: the key has a record, or another call holds its lock (is writing it, or replaying).
      // No record: another call is writing it now (or just rolled back); the client tries again.
      return (await replayOf(record)) ?? { conflict: "in_use" };
    },
    async create(data: PetData): Promise<Pet> {
      ensureOpen();
      const [head, tail] = serializedPetAround(values, data);
      const id = await create(createStatement([head, tail, data.status]));
      if (id === undefined) throw new Error("postgres storage: the create statement wrote nothing");
      return { id, name: data.name, categoryId: data.categoryId, status: data.status };
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
      const { rows } = await pool.query(pageStatement(status, limit)([after]));
      const pets: Pet[] = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i] as Record<string, unknown>;
        pets[i] = storedPet(indexedId(row.id, "postgres"), row.value, values, "postgres");
      }
      return pets;
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
