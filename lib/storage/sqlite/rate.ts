/**
 * SQLite storage, the rate limits' shared count: one row per caller and window, a lease granted
 * by one upsert on the store's write connection (after the writes before it; other processes wait
 * on the file's lock), and rows of ended windows deleted once a minute.
 */
import type { RateCounter } from "../port.ts";
import { type Database, queryAll } from "./connection.ts";

/** Rows of ended windows are deleted at most this often, this many at a time. */
const SWEEP_EVERY_MS = 60_000;
const SWEEP_BATCH = 500;

export interface SqliteRateParts {
  db: Database;
  table: string;
  /** The store's queue of writes (sqlite/writes.ts). */
  serialise<T>(work: () => Promise<T>): Promise<T>;
  ensureOpen(): void;
}

/** The rate counter of the SQLite store whose tables start with `table`. */
export function makeSqliteRateCounter({ db, table, serialise, ensureOpen }: SqliteRateParts): RateCounter {
  const rate = `${table}_rate`;
  let sweptAt = Number.NEGATIVE_INFINITY;
  return {
    async lease({ scope, window, windowSeconds, want, limit }) {
      ensureOpen();
      // Kept a window past its end: a process whose clock runs late still finds its count.
      const expiresAt = (window + 2) * windowSeconds * 1000;
      const now = Date.now();
      const rows = await serialise(async () => {
        if (now - sweptAt >= SWEEP_EVERY_MS) {
          sweptAt = now;
          await queryAll(
            db,
            `DELETE FROM ${rate} WHERE (scope, win) IN (SELECT scope, win FROM ${rate} WHERE expires_at <= ? LIMIT ${SWEEP_BATCH})`,
            [now],
          ).catch(() => {});
        }
        return queryAll(
          db,
          `INSERT INTO ${rate} AS r (scope, win, used, granted, expires_at) VALUES (?1, ?2, MIN(?3, ?4), MIN(?3, ?4), ?5)
             ON CONFLICT (scope, win) DO UPDATE SET granted = MAX(0, MIN(?3, ?4 - r.used)), used = r.used + MAX(0, MIN(?3, ?4 - r.used))
             RETURNING granted, used`,
          [scope, window, want, limit, expiresAt],
        );
      });
      const granted = Number(rows[0]?.granted);
      const used = Number(rows[0]?.used);
      if (!Number.isSafeInteger(granted) || !Number.isSafeInteger(used))
        throw new Error("sqlite storage: no rate count");
      return { granted, used };
    },
  };
}
