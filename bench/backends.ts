/**
 * The storage backends the bench measures, each opened in a namespace of its own (a Redis key
 * prefix, Postgres/SQLite table names, a temporary SQLite file) so a run never touches anyone
 * else's data, and removed again afterwards. An unreachable Redis or Postgres makes the row
 * "skipped", except with CI=true, where the services are expected to be there.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryStorage } from "../lib/storage/memory/index.ts";
import type { PetStorage } from "../lib/storage/port.ts";
import { postgresStorage } from "../lib/storage/postgres/index.ts";
import { redisStorage } from "../lib/storage/redis/index.ts";
import { sqliteStorage } from "../lib/storage/sqlite/index.ts";
import { pgPool, redisClient } from "./drivers.ts";

export const BACKENDS = ["memory", "sqlite", "redis", "postgres"] as const;
export type BackendKind = (typeof BACKENDS)[number];

export const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** A backend that does not answer here: its rows are skipped (a failure under CI=true). */
export class Unavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "Unavailable";
  }
}

/** Where a bench storage keeps its data, so that the bulk loader and the clean-up find it. */
export type Location =
  | { kind: "memory" }
  | { kind: "sqlite"; path: string; table: string }
  | { kind: "redis"; url: string; namespace: string }
  | { kind: "postgres"; url: string; table: string };

/** A storage opened for the bench, and how to remove everything it wrote. */
export interface BenchStorage {
  storage: PetStorage;
  location: Location;
  /** Closes the storage and deletes its keys, tables or file. */
  drop(): Promise<void>;
}

/** A name no other run uses: lower-case letters, digits and "_" (valid as a table name and a key prefix). */
export function uniqueName(label: string): string {
  return `petbench_${process.pid}_${randomBytes(3).toString("hex")}_${label}`;
}

function notReachable(kind: string, error: unknown): Unavailable {
  const reason = error instanceof Error ? error.message : String(error);
  return new Unavailable(`${kind} is not reachable (${reason})`, { cause: error });
}

/** Opens a fresh, empty storage of `kind`. Throws Unavailable when the backend does not answer. */
export async function openBench(kind: BackendKind, label: string): Promise<BenchStorage> {
  const name = uniqueName(label);
  // Generous time-outs: the bench loads a backend hard, and a slow call must count, not fail.
  const operationTimeoutMs = 30_000;
  switch (kind) {
    case "memory": {
      const storage = memoryStorage();
      return { storage, location: { kind }, drop: () => storage.close() };
    }
    case "sqlite": {
      const dir = await mkdtemp(join(tmpdir(), "petbench-"));
      const path = join(dir, "pets.db");
      const storage = await sqliteStorage({ path, table: name, operationTimeoutMs });
      return {
        storage,
        location: { kind, path, table: name },
        async drop() {
          await storage.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    case "redis": {
      let storage: PetStorage;
      try {
        storage = await redisStorage({ url: REDIS_URL, namespace: name, operationTimeoutMs });
      } catch (error) {
        throw notReachable("Redis", error);
      }
      return {
        storage,
        location: { kind, url: REDIS_URL, namespace: name },
        async drop() {
          await storage.close();
          await dropRedis(REDIS_URL, name);
        },
      };
    }
    case "postgres": {
      let storage: PetStorage;
      try {
        storage = await postgresStorage({ url: POSTGRES_URL, table: name, operationTimeoutMs, maxConnections: 16 });
      } catch (error) {
        throw notReachable("PostgreSQL", error);
      }
      return {
        storage,
        location: { kind, url: POSTGRES_URL, table: name },
        async drop() {
          await storage.close();
          await dropPostgres(POSTGRES_URL, name);
        },
      };
    }
  }
}

/** Deletes every key of the namespace (they all start with `<namespace>:`). */
async function dropRedis(url: string, namespace: string): Promise<void> {
  const client = await redisClient(url);
  try {
    let batch: string[] = [];
    for await (const keys of client.scanIterator({ MATCH: `${namespace}:*`, COUNT: 5000 })) {
      batch.push(...keys);
      if (batch.length >= 5000) {
        await client.unlink(batch);
        batch = [];
      }
    }
    if (batch.length > 0) await client.unlink(batch);
  } finally {
    client.destroy();
  }
}

/** Drops the tables and the sequence the Postgres storage created for `table`. */
async function dropPostgres(url: string, table: string): Promise<void> {
  const pool = pgPool(url);
  try {
    await pool.query(
      `DROP TABLE IF EXISTS ${table}_values, ${table}_index, ${table}_idempotency, ${table}_rate, ${table}_meta`,
    );
    await pool.query(`DROP SEQUENCE IF EXISTS ${table}_id_seq`);
  } finally {
    await pool.end();
  }
}
