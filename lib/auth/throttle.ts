/**
 * Failed authentications counted per client address over fixed windows (default 30 a minute):
 * past the limit, that address's requests are answered `429 rate_limited` until the window ends,
 * without their token being checked or a span made; other addresses are never slowed. Counted
 * across processes through the storage's rate counter when it has one, else in this process. One
 * warning per address and window (`onThrottled`).
 */
import type { RateCounter } from "../storage/port.ts";

/** `auth.failureLimit`: failed authentications an address may make in each window. */
export interface FailureLimitOptions {
  /** Failures per window before the address is refused (an integer from 1). */
  limit: number;
  /** The window in seconds (default 60). */
  windowSeconds?: number;
  /** Called once per address and window when it passes the limit: for a warning. What it throws goes to `onError`. */
  onThrottled?: (throttled: AuthThrottledObservation) => void;
}

/** An address passed its limit of failed authentications (once per address and window). */
export interface AuthThrottledObservation {
  /** Always "authThrottled". */
  kind: "authThrottled";
  /** The client address (the socket's, or X-Forwarded-For's last hop behind a trusted proxy). */
  address: string;
  /** The failures it passed (`failureLimit.limit`). */
  limit: number;
  /** The window's length in seconds. */
  windowSeconds: number;
}

export const DEFAULT_FAILURE_LIMIT = { limit: 30, windowSeconds: 60 } as const;

/** The scope of an address's count in the shared counter: no principal id holds a control character. */
const SCOPE_PREFIX = "\u001fauth-failures:";

/** The checks of `auth.failureLimit`: the limit in force, or undefined when turned off. */
export function checkFailureLimit(value: unknown): FailureLimitOptions | undefined {
  if (value === false) return undefined;
  if (value === undefined) return { ...DEFAULT_FAILURE_LIMIT };
  const given = typeof value === "number" ? { limit: value } : value;
  const shape =
    "createPetStore: auth.failureLimit must be false, a number (per minute) or { limit, windowSeconds?, onThrottled? }";
  if (given === null || typeof given !== "object") throw new TypeError(shape);
  const { limit, windowSeconds = 60, onThrottled } = given as FailureLimitOptions;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError(`${shape}: limit must be an integer from 1`);
  if (!Number.isSafeInteger(windowSeconds) || windowSeconds < 1 || windowSeconds > 86_400) {
    throw new TypeError(`${shape}: windowSeconds must be an integer from 1 to 86400`);
  }
  if (onThrottled !== undefined && typeof onThrottled !== "function")
    throw new TypeError(`${shape}: onThrottled must be a function`);
  return { limit, windowSeconds, ...(onThrottled === undefined ? {} : { onThrottled }) };
}

/** The throttle of one store. */
export class FailureThrottle {
  private readonly windowMs: number;
  private window = -1;
  /** This window's failures per address, counted here (no shared counter, or it failed). */
  private counts = new Map<string, number>();
  /** Addresses refused, with when they may try again (ms since the epoch). */
  private blocked = new Map<string, number>();
  /** Addresses already told of in this window. */
  private told = new Set<string>();

  constructor(
    readonly options: FailureLimitOptions,
    private readonly parts: {
      counter: RateCounter | undefined;
      /** Told when the shared counter fails: the failure is counted in this process instead. */
      onCounterError: (error: unknown) => void;
      /** Told once per address and window (made safe by the store). */
      onThrottled: ((throttled: AuthThrottledObservation) => void) | undefined;
    },
  ) {
    this.windowMs = (options.windowSeconds ?? 60) * 1000;
  }

  /** True while some address is refused: only then is a request's address looked at before its token. */
  get blocking(): boolean {
    return this.blocked.size !== 0;
  }

  /** Seconds until `address` may try again, or undefined when it is not refused. */
  blockedSeconds(address: string | undefined, now = Date.now()): number | undefined {
    if (address === undefined) return undefined;
    const until = this.blocked.get(address);
    if (until === undefined) return undefined;
    if (now >= until) {
      this.blocked.delete(address);
      return undefined;
    }
    return Math.max(1, Math.ceil((until - now) / 1000));
  }

  /** Counts one failed authentication of `address`; refuses the address once the window's count reaches the limit. */
  failed(address: string | undefined, now = Date.now()): void {
    if (address === undefined) return;
    const window = Math.floor(now / this.windowMs);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
      this.told = new Set();
      for (const [blocked, until] of this.blocked) if (until <= now) this.blocked.delete(blocked);
    }
    const { counter } = this.parts;
    if (counter === undefined) {
      this.countHere(address, window);
      return;
    }
    const { limit, windowSeconds = 60 } = this.options;
    const lease = { scope: `${SCOPE_PREFIX}${address}`, window, windowSeconds, want: 1, limit };
    Promise.resolve(lease)
      .then((asked) => counter.lease(asked))
      .then(
        ({ granted, used }) => {
          if (granted === 0 || used >= limit) this.block(address, window);
        },
        (error: unknown) => {
          this.parts.onCounterError(error);
          this.countHere(address, window);
        },
      );
  }

  private countHere(address: string, window: number): void {
    const count = (this.counts.get(address) ?? 0) + 1;
    this.counts.set(address, count);
    if (count >= this.options.limit) this.block(address, window);
  }

  private block(address: string, window: number): void {
    this.blocked.set(address, (window + 1) * this.windowMs);
    if (this.told.has(address)) return;
    this.told.add(address);
    const { limit, windowSeconds = 60 } = this.options;
    this.parts.onThrottled?.({ kind: "authThrottled", address, limit, windowSeconds });
  }
}
