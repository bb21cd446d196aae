/**
 * When the client tries a request again and how long it waits first: capped exponential back-off
 * with full jitter, never less than the server's `Retry-After`, bounded in attempts and in the
 * call's total time. The numbers and why: docs/client.md. What is retried is decided per answer
 * by the caller of `withRetries` (client/client.ts).
 */

export interface RetryOptions {
  /** Requests per call, the first included (default 5). `1` sends each request once. */
  attempts?: number;
  /** The wait before the first retry is drawn from 0 to this (default 250 ms); the bound doubles per retry. */
  baseDelayMs?: number;
  /** The most a drawn wait may be (default 5000 ms). A longer `Retry-After` is still honoured. */
  maxDelayMs?: number;
  /** A call's time in all, attempts and waits included (default 20000 ms): no attempt runs past it. */
  totalMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = Object.freeze({
  attempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 5000,
  totalMs: 20_000,
});

/** What one attempt gave: a value, or a failure that another attempt may or may not cure. */
export type Outcome<T> =
  | { ok: true; value: T }
  | { ok: false; error: unknown; retry: boolean; retryAfterMs?: number | undefined };

/**
 * The wait before retry number `retry` (1 for the first): drawn uniformly from 0 to
 * min(maxDelayMs, baseDelayMs × 2^(retry-1)) (full jitter), and at least `retryAfterMs`.
 */
export function delayBefore(
  retry: number,
  retryAfterMs: number | undefined,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const bound = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  const drawn = Math.floor(random() * bound);
  return Math.max(drawn, retryAfterMs ?? 0);
}

/**
 * A `Retry-After` value in milliseconds: delta-seconds or an HTTP date (RFC 9110 10.2.3);
 * undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^[0-9]+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Runs `attempt` until it succeeds, fails for good, runs out of attempts, or the next wait would
 * end past the call's total time; then rejects with the last failure. `attempt` gets the time it
 * may take (the per-attempt time-out, shortened to what is left of the total).
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  attempt: (timeoutMs: number) => Promise<Outcome<T>>,
): Promise<T> {
  const deadline = Date.now() + policy.totalMs;
  for (let tries = 1; ; tries++) {
    if (signal?.aborted) throw signal.reason;
    const outcome = await attempt(Math.max(1, Math.min(timeoutMs, deadline - Date.now())));
    if (outcome.ok) return outcome.value;
    if (!outcome.retry || tries >= policy.attempts) throw outcome.error;
    const wait = delayBefore(tries, outcome.retryAfterMs, policy);
    if (Date.now() + wait >= deadline) throw outcome.error;
    await sleep(wait, signal);
  }
}
