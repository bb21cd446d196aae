/**
 * The figures of a store, for metrics and traces: `createPetStore({ observe })` is called once for
 * every request the store answered and once for every storage call. No metrics library is
 * imported here; the standalone server builds Prometheus metrics on it (server/metrics.ts) and
 * an embedder can feed prom-client or OpenTelemetry the same way (docs/production.md).
 * When `observe` is absent, nothing on the request path measures anything.
 */

/** One request the store answered (through any adapter, `handle` or `respond`). */
export interface RequestObservation {
  kind: "request";
  /** The method as sent, upper-cased (any token a client sends: normalise it before using it as a label). */
  method: string;
  /**
   * The route template the request matched, e.g. "/v1/pets" or "/v1/pets/{petId}" (never the raw
   * path); undefined when no route matched (a 404 not_found).
   */
  route: string | undefined;
  status: number;
  /** Milliseconds from the call of `handle`/`respond` to the response being ready (its promise settled), body reading included. */
  durationMs: number;
  /** The request id the response carries (`X-Request-Id`). */
  requestId: string;
  /** The trace id of the request's span, when one was recorded (lib/tracing.ts); absent otherwise. */
  traceId?: string;
  /** The id of the principal that called, once authenticated (a key's name, a token's `sub`); never a token. */
  principal?: string;
}

/**
 * The storage operations a store performs: the three of the API, readiness's read, a rate limit's
 * lease of the shared count, and moving data (export, import).
 */
export type StorageOperation = "listPets" | "createPet" | "getPet" | "ready" | "rateLimit" | "transfer";

/** One call to the storage backend. */
export interface StorageObservation {
  kind: "storage";
  operation: StorageOperation;
  /** The storage's `kind`: "memory", "sqlite", "redis", "postgres" (or a custom storage's). */
  backend: string;
  /** Milliseconds the call took, time-outs included. */
  durationMs: number;
  /** True when the call failed or timed out (answered 503 storage_unavailable). */
  failed: boolean;
}

/** The storage breaker of a store opened (calls fail fast: the backend is known to be down) or closed again. */
export interface BreakerObservation {
  kind: "breaker";
  state: "open" | "closed";
  /** The storage's `kind`. */
  backend: string;
  /** Failed calls in a row when it opened; 0 when it closed. */
  failures: number;
  /** When it opened: the last failure's cause in one line (e.g. "connection refused [ECONNREFUSED]"). */
  cause?: string;
}

/** A request the rate limits refused (`429 rate_limited`). */
export interface RateLimitObservation {
  /** Always "rateLimited". */
  kind: "rateLimited";
  /** The caller: its principal's id (a key's name, a token's `sub`, `key:` and a digest's start for a plain key); never a key. */
  scope: string;
  /** True for the caller's first refusal in this window: log one line per caller and window with it. */
  first: boolean;
  /** The limit it passed (`rateLimit.limit`). */
  limit: number;
  /** The window's length in seconds (`rateLimit.windowSeconds`). */
  windowSeconds: number;
}

/**
 * A stored record met that cannot be read (each time: the report to `onError` comes at most once a
 * minute per key). Its key is not here: a metric's label would grow with every bad record.
 */
export interface InvalidRecordObservation {
  /** Always "invalidRecord". */
  kind: "invalidRecord";
  /** The storage's `kind`. */
  backend: string;
}

export type Observation =
  | RequestObservation
  | StorageObservation
  | BreakerObservation
  | RateLimitObservation
  | InvalidRecordObservation;

/** Called synchronously with each observation; what it throws is reported to `onError` and ignored. */
export type Observer = (observation: Observation) => void;

/** The observer, made safe: it never throws, whatever `observe` does. */
export function safeObserver<T = Observation>(
  observe: (observation: T) => void,
  onError: (error: unknown) => void,
): (observation: T) => void {
  return (observation) => {
    try {
      observe(observation);
    } catch (error) {
      try {
        onError(error);
      } catch {}
    }
  };
}
