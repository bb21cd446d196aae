/**
 * Rate limits (contract 1.3, "Rate limits"): each caller, the scope of its key, may make `limit`
 * requests in each fixed window of `windowSeconds` (windows counted from the epoch, alike in every
 * process). Over a storage with a shared counter the count is every process's: a process takes a
 * part of what the window has left at once (a lease) and spends it without asking again, so a
 * request seldom waits on the counter, and what all processes admit never passes the limit.
 * Without one (memory, a storage of your own) each process counts on its own.
 */
import type { Awaitable } from "./awaitable.ts";
import type { RateLimitObservation } from "./observe.ts";
import type { RateCounter } from "./storage/port.ts";

/** `createPetStore({ rateLimit })`: at most `limit` requests per caller in each window of `windowSeconds`. */
export interface RateLimitOptions {
  /** Requests a caller may make in one window: an integer from 1. */
  limit: number;
  /** The window's length in seconds: an integer from 1 to 86,400. */
  windowSeconds: number;
  /**
   * Called with each refused request (as `observe` is with the same object): hears refusals without
   * observing every request. What it throws goes to `onError`.
   */
  onLimited?: (refusal: RateLimitObservation) => void;
}

/** What the limiter decided for one request, with the headers of its answer. */
export interface RateVerdict {
  allowed: boolean;
  /** `RateLimit-Policy` and `RateLimit`, and `Retry-After` when refused. */
  headers: Record<string, string>;
  /** True for the first refusal of this caller in this window (one log line each). */
  first: boolean;
}

/** What this process knows of one caller's current window. */
interface CallerWindow {
  /** Requests this process admitted. */
  served: number;
  /** Requests the counter granted this process (served plus what is left of its leases). */
  granted: number;
  /** The window's count across processes, as the last lease answered. */
  used: number;
  /** The lease being asked for, which requests that find none left wait on: whether it was answered. */
  leasing: Promise<boolean> | undefined;
  /** Whether a refusal was reported already. */
  limited: boolean;
}

/** The checks of `rateLimit`: a TypeError naming what is wrong. */
export function checkRateLimit(value: unknown): RateLimitOptions | undefined {
  if (value === undefined) return undefined;
  const shape = "createPetStore: rateLimit must be { limit, windowSeconds }";
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new TypeError(shape);
  for (const name of Object.keys(value)) {
    if (name !== "limit" && name !== "windowSeconds" && name !== "onLimited") {
      throw new TypeError(
        `createPetStore: unknown rateLimit option "${name}" (known: limit, windowSeconds, onLimited)`,
      );
    }
  }
  const { limit, windowSeconds, onLimited } = value as Record<string, unknown>;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) {
    throw new TypeError(`${shape}: limit must be an integer from 1 (got ${String(limit)})`);
  }
  if (
    typeof windowSeconds !== "number" ||
    !Number.isInteger(windowSeconds) ||
    windowSeconds < 1 ||
    windowSeconds > 86_400
  ) {
    throw new TypeError(`${shape}: windowSeconds must be an integer from 1 to 86400 (got ${String(windowSeconds)})`);
  }
  if (onLimited !== undefined && typeof onLimited !== "function") {
    throw new TypeError(`${shape}: onLimited must be a function (refusal) => void`);
  }
  return onLimited === undefined
    ? { limit, windowSeconds }
    : { limit, windowSeconds, onLimited: onLimited as RateLimitOptions["onLimited"] };
}

/** The limiter of one store. */
export class RateLimiter {
  readonly policy: string;
  private readonly windowMs: number;
  /** This window's callers, by scope (a digest: never a token). */
  private callers = new Map<string, CallerWindow>();
  private window = -1;
  /** Whether the last lease failed: only the first failure of a run is told. */
  private counterFailing = false;

  private readonly counter: RateCounter | undefined;
  private readonly onCounterError: (error: unknown) => void;

  constructor(
    readonly options: RateLimitOptions,
    parts: {
      /**
       * The storage's shared counter, its calls guarded as every storage call is (time-out,
       * breaker); none: this process counts alone.
       */
      counter: RateCounter | undefined;
      /** Told when the counter starts failing: requests go on, counted by this process alone. */
      onCounterError: (error: unknown) => void;
    },
  ) {
    this.counter = parts.counter;
    this.onCounterError = parts.onCounterError;
    this.policy = `"default";q=${options.limit};w=${options.windowSeconds}`;
    this.windowMs = options.windowSeconds * 1000;
  }

  /** Admits or refuses one request of `scope` now; waits only when this process holds no lease for it. */
  admit(scope: string, now = Date.now()): Awaitable<RateVerdict> {
    const window = Math.floor(now / this.windowMs);
    if (window !== this.window) {
      this.callers = new Map(); // the windows that ended are forgotten at once
      this.window = window;
    }
    let caller = this.callers.get(scope);
    if (caller === undefined) {
      caller = { served: 0, granted: 0, used: 0, leasing: undefined, limited: false };
      this.callers.set(scope, caller);
    }
    return this.decide(scope, caller, window, now);
  }

  /**
   * The verdict of one request: from this process's lease when it holds one, else after asking
   * the counter; `alone` (no counter, or the lease asked for this request failed) by this
   * process's own count, up to the limit.
   */
  private decide(
    scope: string,
    caller: CallerWindow,
    window: number,
    now: number,
    alone = this.counter === undefined,
  ): Awaitable<RateVerdict> {
    const { limit } = this.options;
    if (alone) {
      if (caller.served >= limit) return this.refuse(caller, window, now);
      caller.served++;
      return this.allow(Math.max(0, limit - Math.max(caller.served, caller.used)), window, now);
    }
    const left = caller.granted - caller.served;
    if (left > 0) {
      caller.served++;
      // Half of the last lease spent: the next is asked for now, so that no request waits for it.
      if (left - 1 <= caller.granted / 2 && caller.used < limit) this.lease(scope, caller, window);
      return this.allow(Math.max(0, limit - caller.used + left - 1), window, now);
    }
    if (caller.used >= limit && caller.leasing === undefined) return this.refuse(caller, window, now);
    const leasing = caller.leasing ?? this.lease(scope, caller, window);
    // Decided afterwards as of the request's arrival: it counts in the window it came in.
    return leasing.then((leased) => {
      if (!leased) return this.decide(scope, caller, window, now, true);
      if (caller.granted - caller.served <= 0 && caller.used >= limit) return this.refuse(caller, window, now);
      return this.decide(scope, caller, window, now);
    });
  }

  /**
   * Asks the counter for a lease of about a tenth of what the window has left; resolves whether
   * it was granted an answer. A counter that fails (or whose backend the breaker knows is down:
   * at once) leaves the request to this process's count.
   */
  private lease(scope: string, caller: CallerWindow, window: number): Promise<boolean> {
    if (caller.leasing !== undefined) return caller.leasing;
    const { limit, windowSeconds } = this.options;
    const want = Math.max(1, Math.ceil((limit - caller.used) / 10));
    const counter = this.counter as RateCounter;
    caller.leasing = Promise.resolve()
      .then(() => counter.lease({ scope, window, windowSeconds, want, limit }))
      .then(
        ({ granted, used }) => {
          this.counterFailing = false;
          caller.granted += granted;
          // Nothing granted means the window is spent, whatever count came with it.
          caller.used = granted === 0 ? Math.max(limit, used) : Math.max(caller.used, used);
          return true;
        },
        (error: unknown) => {
          if (!this.counterFailing) this.onCounterError(error);
          this.counterFailing = true;
          return false;
        },
      )
      .finally(() => {
        caller.leasing = undefined;
      });
    return caller.leasing;
  }

  private allow(remaining: number, window: number, now: number): RateVerdict {
    const headers = {
      "ratelimit-policy": this.policy,
      ratelimit: `"default";r=${remaining};t=${this.secondsLeft(window, now)}`,
    };
    return { allowed: true, headers, first: false };
  }

  private refuse(caller: CallerWindow, window: number, now: number): RateVerdict {
    const t = this.secondsLeft(window, now);
    const first = !caller.limited;
    caller.limited = true;
    const headers = { "ratelimit-policy": this.policy, ratelimit: `"default";r=0;t=${t}`, "retry-after": String(t) };
    return { allowed: false, headers, first };
  }

  /** Whole seconds to the window's end, at least 1 (a client waiting that long finds a new window). */
  private secondsLeft(window: number, now: number): number {
    return Math.max(1, Math.ceil(((window + 1) * this.windowMs - now) / 1000));
  }
}
