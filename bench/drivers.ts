/**
 * The bench's own connections to Redis, Postgres and SQLite, through the very drivers the
 * storages use (@keyv/redis's client, the `pg` that @keyv/postgres brings, @keyv/sqlite's
 * connection), for bulk loading and for removing what a run wrote.
 */
import { requireFromDriver } from "../lib/storage/driver.ts";

/** The part of `pg` the bench uses. */
export interface PgPool {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}

/** A connected Redis client that fails fast (no reconnecting, no offline queue). */
export async function redisClient(url: string) {
  const { createClient } = await import("@keyv/redis");
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: false },
  });
  client.on("error", () => {});
  await client.connect();
  return client;
}

/** A small pg pool on `url`. */
export function pgPool(url: string): PgPool {
  const pg = requireFromDriver<{
    Pool: new (config: Record<string, unknown>) => PgPool & { on(e: "error", f: () => void): void };
  }>("@keyv/postgres", "pg", "postgres");
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 2000 });
  pool.on("error", () => {});
  return pool;
}

interface Sqlite3Database {
  configure(option: "busyTimeout", ms: number): void;
  all(sql: string, params: unknown[], callback: (error: Error | null, rows: Record<string, unknown>[]) => void): void;
  close(callback: (error: Error | null) => void): void;
}

/** One SQLite connection on the file at `path` (queries run one after another on it). */
export async function sqliteConnection(path: string) {
  const sqlite3 = requireFromDriver<{
    Database: new (path: string, callback: (error: Error | null) => void) => Sqlite3Database;
  }>("@keyv/sqlite", "sqlite3", "sqlite");
  const db = await new Promise<Sqlite3Database>((resolve, reject) => {
    const opened: Sqlite3Database = new sqlite3.Database(path, (error) => (error ? reject(error) : resolve(opened)));
  });
  db.configure("busyTimeout", 30_000);
  return {
    query: (sql: string, params: unknown[] = []) =>
      new Promise<Record<string, unknown>[]>((resolve, reject) =>
        db.all(sql, params, (error, rows) => (error ? reject(error) : resolve(rows))),
      ),
    close: () => new Promise<void>((resolve, reject) => db.close((error) => (error ? reject(error) : resolve()))),
  };
}
