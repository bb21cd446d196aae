/**
 * Postgres storage: pet values in Keyv's table (@keyv/postgres, `<table>_values`, Keyv's format),
 * and beside it what Keyv cannot do: a sequence `<table>_id_seq` and an index table
 * `<table>_index (id, status)`. A page is one prepared statement: the index range (O(log n + limit)
 * whatever the filter) and each pet's value by its primary key. Here: the options, opening, reads
 * and clear; the pool and schema are in postgres/connection.ts, creates in postgres/writes.ts.
 */
import type { Pet, PetStatus } from "../../schemas.ts";
import { PET_STATUSES } from "../../schemas.ts";
import { redactUrl, StorageConfigError, unreachable } from "../config-error.ts";
import { loadDriver, requireFromDriver } from "../driver.ts";
import { blamed, InvalidRecordError } from "../failures.ts";
import type { CreateOnceResult, IdempotencyRecord, ListPage, PetStorage } from "../port.ts";
import { REPORT_TO } from "../report-to.ts";
import {
  indexedId,
  makeKeyvPetReader,
  petValues,
  type RecordNames,
  readPageSkipping,
  readPet,
  storageClosed,
} from "../values.ts";
import {
  createSchema,
  nameStatement,
  openPool,
  type PgModule,
  type PgNamedQuery,
  postgresBlamesValue,
} from "./connection.ts";
import { makePostgresRateCounter } from "./rate.ts";
import { makePostgresTransfer } from "./transfer.ts";
import { makeWriter } from "./writes.ts";

type KeyvPostgresDriver = typeof import("@keyv/postgres");

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

/**
 * Opens a Postgres storage; rejects with StorageConfigError when the driver is missing or the
 * server does not answer. @example await postgresStorage({ url: "postgres://app@db/shop", table: "pets_eu" })
 */
export async function postgresStorage(options: PostgresStorageOptions): Promise<PetStorage> {
  const { url, table, schema, timeoutMs, maxConnections } = checkOptions(options);
  const { default: KeyvPostgres } = await loadDriver<KeyvPostgresDriver>("@keyv/postgres", "postgres");
  const pg = requireFromDriver<PgModule>("@keyv/postgres", "pg", "postgres");

  const pool = openPool(pg, url, timeoutMs, maxConnections);
  const started = performance.now();
  try {
    await createSchema(pool, schema, table);
  } catch (error) {
    await pool.end().catch(() => {});
    throw unreachable("postgres", url, 5432, error, performance.now() - started);
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
  const qualified = `${schema}.${table}`;
  let closing: Promise<void> | undefined;
  // A closed store refuses calls before they reach the driver.
  const ensureOpen = () => {
    if (closing !== undefined) throw storageClosed("postgres");
  };
  const names: RecordNames = {
    backend: "postgres",
    pet: (id) => `pets:${id}`,
    index: `${qualified}_index`,
    sequence: `${qualified}_id_seq`,
  };
  /** What no answer shows (the sequence repaired): the store's onError once it hands it over. */
  let report: (error: Error) => void = () => {};
  const writer = makeWriter({ pool, qualified, values, ensureOpen, names, warn: (warning) => report(warning) });
  const readPageValue = makeKeyvPetReader(values, names);

  /**
   * One statement per page: the index range and, for each of its rows, Keyv's value (null when
   * missing) by a subquery rather than a join. The status and the limit are written into the
   * statement (both checked: a PetStatus, an integer of at most 101), only the cursor is a
   * parameter: the prepared plan is then an index range and one primary-key look-up per pet
   * whatever the cursor. A generic plan with them as parameters could filter the whole id index for
   * a rare status, or hash-join the whole values table, and pass the cost at which Postgres
   * compiles the query (JIT, 10 ms per call). At most 4 × 101 statements per connection.
   */
  const pages = new Map<string, (values: unknown[]) => PgNamedQuery>();
  const findPageStatement = (status: PetStatus | undefined, limit: number) => {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000)
      throw new Error(`postgres storage: bad page size ${limit}`);
    if (status !== undefined && !PET_STATUSES.includes(status)) throw new Error("postgres storage: bad status");
    const name = `${status ?? ""}${limit}`;
    let statement = pages.get(name);
    if (statement === undefined) {
      const where = status === undefined ? "i.id > $1" : `i.status = '${status}' AND i.id > $1`;
      statement = nameStatement(
        `SELECT i.id, (SELECT v.value FROM ${qualified}_values v WHERE v.key = 'pets:' || i.id) AS value FROM ${qualified}_index i WHERE ${where} ORDER BY i.id LIMIT ${limit}`,
      );
      pages.set(name, statement);
    }
    return statement;
  };

  /** Up to `limit` index rows of `status` with ids above `after`, each with Keyv's value (null when missing). */
  const readRows = async (status: PetStatus | undefined, after: number, limit: number) => {
    try {
      return (await pool.query(findPageStatement(status, limit)([after]))).rows;
    } catch (error) {
      throw blamed(error, "postgres", names.index, postgresBlamesValue);
    }
  };

  return {
    kind: "postgres",
    // Every pet it returns was checked where it was decoded (lib/storage/values.ts).
    trustedPets: true,
    async findOnce(record: IdempotencyRecord): Promise<CreateOnceResult | undefined> {
      ensureOpen();
      try {
        return await writer.findReplay(record);
      } catch (error) {
        throw blamed(error, "postgres", `${qualified}_idempotency:${record.key}`, postgresBlamesValue);
      }
    },
    createOnce: writer.createOnce,
    create: writer.create,
    async get(id: number): Promise<Pet | undefined> {
      ensureOpen();
      try {
        return await readPet(
          id,
          names,
          async () => (await pool.query(`SELECT 1 FROM ${qualified}_index WHERE id = $1`, [id])).rows.length > 0,
          () => values.get(String(id)),
        );
      } catch (error) {
        throw blamed(error, "postgres", names.pet(id), postgresBlamesValue);
      }
    },
    async list(page: ListPage): Promise<Pet[]> {
      ensureOpen();
      const rows = await readRows(page.status, page.after, page.limit);
      const pets: Pet[] = new Array(rows.length);
      try {
        for (let i = 0; i < rows.length; i++) {
          const row = rows[i] as Record<string, unknown>;
          pets[i] = readPageValue(indexedId(row.id, names), row.value);
        }
        return pets;
      } catch (error) {
        if (!(error instanceof InvalidRecordError) || page.onInvalid === undefined) throw error;
        // A page that met a bad record: read again, leaving out each pet that cannot be decoded.
        const numbered = async (from: number, count: number) =>
          (await readRows(page.status, from, count)).map((row) => ({ id: indexedId(row.id, names), value: row.value }));
        return readPageSkipping(page, numbered, (row) => readPageValue(row.id, row.value));
      }
    },
    async ping() {
      ensureOpen();
      await pool.query("SELECT 1");
    },
    close() {
      closing ??= pool.end().catch(() => {});
      return closing;
    },
    /** The store's onError: told of repairs. */
    [REPORT_TO]: (onError: (error: Error) => void) => {
      report = onError;
    },
    transfer: makePostgresTransfer({ pool, qualified, values, ensureOpen, names }),
    rateCounter: makePostgresRateCounter(pool, qualified, ensureOpen),
    /** Empties this store's own tables (`<table>_*` that it created) and restarts its sequence at 1, in one transaction. */
    async clear() {
      ensureOpen();
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const own = [`${table}_index`, `${table}_values`, `${table}_idempotency`, `${table}_rate`, `${table}_meta`];
        const { rows } = await client.query(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name = ANY($2)",
          [schema, own],
        );
        const tables = rows.map((row) => `${schema}.${String(row.table_name)}`);
        if (tables.length > 0) await client.query(`TRUNCATE ${tables.join(", ")}`);
        await client.query(`ALTER SEQUENCE ${qualified}_id_seq RESTART WITH 1`);
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
