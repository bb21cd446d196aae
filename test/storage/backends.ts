/**
 * The backends as the storage tests see them (memory, SQLite, Redis, a Redis Cluster, Postgres):
 * how to open a store in a namespace of its own, the storage spec a child process opens, raw access
 * that goes around the store (to plant invalid values, half-made pets, a nearly exhausted
 * sequence), and clean-up of exactly the namespaces the tests made.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PetStatus } from "../../lib/schemas.ts";
import { requireFromDriver } from "../../lib/storage/driver.ts";
import { memoryStorage } from "../../lib/storage/memory/index.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import { postgresStorage } from "../../lib/storage/postgres/index.ts";
import { redisStorage } from "../../lib/storage/redis/index.ts";
import { sqliteStorage } from "../../lib/storage/sqlite/index.ts";
import { redisClusterBackend } from "./redis/cluster-backend.ts";
import { POSTGRES_URL, REDIS_URL, redisClusterAvailable, serviceAvailable } from "./services.ts";

export interface OpenOptions {
  operationTimeoutMs?: number;
}

/** Writes that go around the store, to build states a store never makes itself. */
export interface Raw {
  /** Stores `raw` as the serialized value of pet `id`, touching no index. */
  writeValue(ns: string, id: number, raw: string): Promise<void>;
  /** Adds `id` to the indexes (all, and `status`), storing no value. */
  addToIndex(ns: string, id: number, status: PetStatus): Promise<void>;
  /** Sets the sequence so that the next id is `last + 1`. */
  setSequence(ns: string, last: number): Promise<void>;
  /** The idempotency records stored (expired ones not yet removed included). */
  keyRecords(ns: string): Promise<number>;
  /** Redis: the time to live (PTTL, ms) of one idempotency record of the namespace. */
  keyTtlMs?(ns: string): Promise<number | undefined>;
  /** A Keyv of its own on the store's values (Keyv's table or key prefix), as another program would open it. */
  keyv(ns: string): Promise<{ get(key: string): Promise<unknown>; disconnect(): Promise<void> }>;
  /** Writes one record of another kind under the namespace (as idempotency records are: a table or key of its own). */
  plantRecord(ns: string): Promise<void>;
  /** How many such records the namespace holds. */
  countRecords(ns: string): Promise<number>;
}

export interface Backend {
  name: "memory" | "sqlite" | "redis" | "redis-cluster" | "postgres";
  /** Data outlives the store (and the process). */
  persistent: boolean;
  open(ns: string, options?: OpenOptions): Promise<PetStorage>;
  /** The openStorage spec of namespace `ns`, for child processes. */
  spec(ns: string): string;
  /** Raw access (not for memory, whose data only the store can reach). */
  raw: Raw | undefined;
  /** Removes the data of these namespaces, and nothing else, and releases raw connections. */
  cleanup(namespaces: string[]): Promise<void>;
}

/** The serialized form Keyv stores for a value (the layout @keyv/* read back). */
export const keyvJson = (value: unknown): string => JSON.stringify({ value });

/** Memory: a new store per namespace; nothing to clean. */
export function memoryBackend(): Backend {
  return {
    name: "memory",
    persistent: false,
    async open(ns) {
      return memoryStorage({ namespace: ns });
    },
    spec: () => "memory",
    raw: undefined,
    async cleanup() {},
  };
}

type Sqlite3 = typeof import("sqlite3");

/** SQLite: one file in a temporary folder of this run, a table prefix per namespace. */
export function sqliteBackend(): Backend {
  let dir: string | undefined;
  const file = () => {
    dir ??= mkdtempSync(join(tmpdir(), "petstore-sqlite-"));
    return join(dir, "pets.db");
  };
  let db: import("sqlite3").Database | undefined;
  const all = async (sql: string, ...params: unknown[]): Promise<Record<string, unknown>[]> => {
    await run("SELECT 1");
    const conn = db as import("sqlite3").Database;
    return new Promise((resolve, reject) =>
      conn.all(sql, params, (error, rows) => (error ? reject(error) : resolve(rows as Record<string, unknown>[]))),
    );
  };
  const run = async (sql: string, ...params: unknown[]) => {
    if (db === undefined) {
      const sqlite3 = requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");
      db = new sqlite3.Database(file());
      db.configure("busyTimeout", 5000);
    }
    const conn = db;
    await new Promise<void>((resolve, reject) => conn.run(sql, params, (error) => (error ? reject(error) : resolve())));
  };
  return {
    name: "sqlite",
    persistent: true,
    open: (ns, options = {}) => sqliteStorage({ path: file(), table: ns, ...options }),
    spec: (ns) => `sqlite:${file()}?namespace=${ns}`,
    raw: {
      writeValue: (ns, id, raw) =>
        run(
          `INSERT INTO ${ns}_values (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
          `pets:${id}`,
          raw,
        ),
      addToIndex: (ns, id, status) => run(`INSERT INTO ${ns}_index (id, status) VALUES (?, ?)`, id, status),
      setSequence: (ns, last) => run(`UPDATE ${ns}_seq SET value = ? WHERE id = 1`, last),
      keyRecords: async (ns) => Number((await all(`SELECT count(*) AS n FROM ${ns}_idempotency`))[0]?.n),
      async keyv(ns) {
        const { default: KeyvSqlite } = await import("@keyv/sqlite");
        const { default: Keyv } = await import("keyv");
        const keyv = new Keyv({
          store: new KeyvSqlite({ uri: `sqlite://${file()}`, table: `${ns}_values` }),
          namespace: "pets",
        });
        return keyv;
      },
      async plantRecord(ns) {
        // The table is the store's own (made at open).
        await run(
          `INSERT INTO ${ns}_idempotency (scope, key, fingerprint, pet_id, expires_at) VALUES ('s', 'k', 'f', 1, 0)`,
        );
      },
      async countRecords(ns) {
        await run("SELECT 1"); // opens the connection
        const conn = db as import("sqlite3").Database;
        return new Promise((resolve, reject) =>
          conn.get(`SELECT count(*) AS n FROM ${ns}_idempotency`, (error, row: { n: number }) =>
            error ? reject(error) : resolve(row.n),
          ),
        );
      },
    },
    async cleanup() {
      const conn = db;
      db = undefined;
      if (conn) await new Promise<void>((resolve) => conn.close(() => resolve()));
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    },
  };
}

type RedisDriver = typeof import("@keyv/redis");
type RedisClient = ReturnType<RedisDriver["createClient"]>;

/** Redis at PETSTORE_TEST_REDIS_URL: a key prefix per namespace. */
export function redisBackend(): Backend {
  let client: RedisClient | undefined;
  const raw = async () => {
    if (client === undefined) {
      const { createClient } = await import("@keyv/redis");
      client = createClient({ url: REDIS_URL });
      client.on("error", () => {});
      await client.connect();
    }
    return client;
  };
  return {
    name: "redis",
    persistent: true,
    open: (ns, options = {}) => redisStorage({ url: REDIS_URL, namespace: ns, ...options }),
    spec: (ns) => `${REDIS_URL}?namespace=${ns}`,
    raw: {
      async writeValue(ns, id, value) {
        await (await raw()).set(`${ns}::${id}`, value);
      },
      async addToIndex(ns, id, status) {
        const c = await raw();
        await c.zAdd(`${ns}:ids`, { score: id, value: String(id) });
        await c.zAdd(`${ns}:ids:${status}`, { score: id, value: String(id) });
      },
      async setSequence(ns, last) {
        await (await raw()).set(`${ns}:seq`, String(last));
      },
      async keyRecords(ns) {
        let n = 0;
        for await (const keys of (await raw()).scanIterator({ MATCH: `${ns}:idem:*`, COUNT: 1000 })) n += keys.length;
        return n;
      },
      async keyTtlMs(ns) {
        const c = await raw();
        for await (const keys of c.scanIterator({ MATCH: `${ns}:idem:*`, COUNT: 1000 })) {
          if (keys[0] !== undefined) return Number(await c.pTTL(keys[0]));
        }
        return undefined;
      },
      async keyv(ns) {
        const { default: KeyvRedis } = await import("@keyv/redis");
        const { default: Keyv } = await import("keyv");
        return new Keyv({ store: new KeyvRedis(REDIS_URL, { namespace: ns }), namespace: ns, useKeyPrefix: false });
      },
      async plantRecord(ns) {
        await (await raw()).set(`${ns}:idem:1:s:k`, "record");
      },
      async countRecords(ns) {
        return (await (await raw()).exists(`${ns}:idem:1:s:k`)) as number;
      },
    },
    async cleanup(namespaces) {
      if (namespaces.length > 0) {
        const c = await raw();
        for (const ns of namespaces) {
          // Only keys of this namespace: "<ns>:…" (namespaces hold no glob characters).
          for await (const keys of c.scanIterator({ MATCH: `${ns}:*`, COUNT: 1000 })) {
            if (keys.length > 0) await c.del(keys);
          }
        }
      }
      const c = client;
      client = undefined;
      if (c) c.destroy();
    },
  };
}

interface PgPool {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
  on(event: "error", listener: () => void): unknown;
}

/** Postgres at PETSTORE_TEST_POSTGRES_URL: a table prefix per namespace. */
export function postgresBackend(): Backend {
  let pool: PgPool | undefined;
  const query = (sql: string, params?: unknown[]) => {
    if (pool === undefined) {
      const pg = requireFromDriver<{ Pool: new (c: object) => PgPool }>("@keyv/postgres", "pg", "postgres");
      pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
      pool.on("error", () => {});
    }
    return pool.query(sql, params);
  };
  return {
    name: "postgres",
    persistent: true,
    open: (ns, options = {}) => postgresStorage({ url: POSTGRES_URL, table: ns, ...options }),
    spec: (ns) => `${POSTGRES_URL}?namespace=${ns}`,
    raw: {
      async writeValue(ns, id, raw) {
        await query(
          `INSERT INTO ${ns}_values (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
          [`pets:${id}`, raw],
        );
      },
      async addToIndex(ns, id, status) {
        await query(`INSERT INTO ${ns}_index (id, status) VALUES ($1, $2)`, [id, status]);
      },
      async setSequence(ns, last) {
        await query(`SELECT setval('${ns}_id_seq', $1)`, [last]);
      },
      async keyRecords(ns) {
        return Number((await query(`SELECT count(*) AS n FROM ${ns}_idempotency`)).rows[0]?.n);
      },
      async keyv(ns) {
        const { default: KeyvPostgres } = await import("@keyv/postgres");
        const { default: Keyv } = await import("keyv");
        return new Keyv({ store: new KeyvPostgres({ uri: POSTGRES_URL, table: `${ns}_values` }), namespace: "pets" });
      },
      async plantRecord(ns) {
        // The table is the store's own (made at open).
        await query(
          `INSERT INTO ${ns}_idempotency (scope, key, fingerprint, pet_id, expires_at) VALUES ('s', 'k', 'f', 1, 0)`,
        );
      },
      async countRecords(ns) {
        return Number((await query(`SELECT count(*) AS n FROM ${ns}_idempotency`)).rows[0]?.n);
      },
    },
    async cleanup(namespaces) {
      for (const ns of namespaces) {
        await query(`DROP TABLE IF EXISTS ${ns}_values, ${ns}_index, ${ns}_idempotency, ${ns}_rate, ${ns}_meta`);
        await query(`DROP SEQUENCE IF EXISTS ${ns}_id_seq`);
      }
      const p = pool;
      pool = undefined;
      if (p) await p.end();
    },
  };
}

/**
 * The backends whose tests can run here (Redis and Postgres only when they answer, the Redis
 * Cluster only where redis-server is installed; see services.ts). `cluster: false` leaves out the
 * cluster, for suites about something else than the storage (another runtime).
 */
export function backends(what: string, options: { memory?: boolean; cluster?: boolean } = {}): Backend[] {
  const list: Backend[] = [];
  if (options.memory !== false) list.push(memoryBackend());
  list.push(sqliteBackend());
  if (serviceAvailable("redis", what)) list.push(redisBackend());
  if (options.cluster !== false && redisClusterAvailable(what)) list.push(redisClusterBackend());
  if (serviceAvailable("postgres", what)) list.push(postgresBackend());
  return list;
}
