/**
 * Redis storage, the rate limits' shared count: one key per caller and window
 * (`<prefix>:rate:<window>:<scope>`, in the store's slot on a cluster), a lease granted by one
 * script, the key expiring a window after its own ends.
 */
import type { RateCounter } from "../port.ts";
import type { RedisConnection } from "./connection.ts";
import { RATE_LEASE, readReply, runScript } from "./scripts.ts";

/** The rate counter of the Redis store whose keys start with `prefix`. */
export function makeRedisRateCounter(connection: RedisConnection, prefix: string, ensureOpen: () => void): RateCounter {
  return {
    async lease({ scope, window, windowSeconds, want, limit }) {
      ensureOpen();
      // Kept a window past its end: a process whose clock runs late still finds its count.
      const expiresAt = (window + 2) * windowSeconds * 1000;
      const key = `${prefix}:rate:${window}:${scope}`;
      const reply = readReply(
        await runScript(connection.commands, RATE_LEASE, [key], [String(want), String(limit), String(expiresAt)]),
      );
      const granted = Number(reply[0]);
      const used = Number(reply[1]);
      if (!Number.isSafeInteger(granted) || !Number.isSafeInteger(used))
        throw new Error("redis storage: no rate count");
      return { granted, used };
    },
  };
}
