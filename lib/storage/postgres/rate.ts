/**
 * Postgres storage, the rate limits' shared count: one row per caller and window, a lease granted
 * by one upsert (the row's lock orders processes), and rows of ended windows deleted a batch at a
 * time, skipping any another process holds.
 */
import type { RateCounter } from "../port.ts";
import { nameStatement, type PgPool } from "./connection.ts";

/** Rows of ended windows deleted with each lease, at most. */
const SWEEP_BATCH = 100;

/** The rate counter of the Postgres store whose tables start with `qualified`. */
export function makePostgresRateCounter(pool: PgPool, qualified: string, ensureOpen: () => void): RateCounter {
  const table = `${qualified}_rate`;
  // $1 scope, $2 window, $3 want, $4 limit, $5 when the row may go (ms), $6 now (ms).
  const lease = nameStatement(
    `WITH swept AS (DELETE FROM ${table} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${table} WHERE expires_at <= $6::bigint LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)))
     INSERT INTO ${table} AS r (scope, win, used, granted, expires_at) VALUES ($1, $2::bigint, LEAST($3::bigint, $4::bigint), LEAST($3::bigint, $4::bigint), $5::bigint)
     ON CONFLICT (scope, win) DO UPDATE SET granted = GREATEST(0, LEAST($3::bigint, $4::bigint - r.used)), used = r.used + GREATEST(0, LEAST($3::bigint, $4::bigint - r.used))
     RETURNING granted, used`,
  );
  return {
    async lease({ scope, window, windowSeconds, want, limit }) {
      ensureOpen();
      // Kept a window past its end: a process whose clock runs late still finds its count.
      const expiresAt = (window + 2) * windowSeconds * 1000;
      const { rows } = await pool.query(lease([scope, window, want, limit, expiresAt, Date.now()]));
      const granted = Number(rows[0]?.granted);
      const used = Number(rows[0]?.used);
      if (!Number.isSafeInteger(granted) || !Number.isSafeInteger(used))
        throw new Error("postgres storage: no rate count");
      return { granted, used };
    },
  };
}
