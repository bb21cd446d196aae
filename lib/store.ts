/**
 * `createPetStore`: the options checked, the storage guarded, the operations and the handler
 * built, and the store that hands them out.
 */
import type { AuthOption } from "./auth/option.ts";
import { checkAuth } from "./auth/option.ts";
import type { FailureLimitOptions } from "./auth/throttle.ts";
import { FailureThrottle } from "./auth/throttle.ts";
import type { Awaitable } from "./awaitable.ts";
import { isPromise } from "./awaitable.ts";
import type { CacheControlOptions } from "./cache-control.ts";
import { cachePolicy, checkCacheControl } from "./cache-control.ts";
import type { CorsOptions } from "./cors.ts";
import { checkCors, createCors } from "./cors.ts";
import { isPetStoreError } from "./errors.ts";
import { createHandler } from "./handler.ts";
import type { PetStoreRequest, PetStoreResponse } from "./http.ts";
import type { IdempotentCreateOptions } from "./idempotency.ts";
import { checkIdempotentOptions, DEFAULT_IDEMPOTENCY_TTL_MS } from "./idempotency.ts";
import type { Observer, RateLimitObservation } from "./observe.ts";
import { safeObserver } from "./observe.ts";
import { openApiRoute } from "./openapi.ts";
import type { CreateContext, Operations } from "./operations.ts";
import { createOperations } from "./operations.ts";
import { checkOptionNames } from "./options.ts";
import { BASE_PATH_PATTERN } from "./patterns.ts";
import { checkListQuery } from "./query.ts";
import type { RateLimitOptions, RateVerdict } from "./rate-limit.ts";
import { checkRateLimit, RateLimiter } from "./rate-limit.ts";
import type { PetStoreRules } from "./rules.ts";
import { checkRules, inProcessCaller } from "./rules.ts";
import { DEFAULT_DEPRECATED_AT, DEFAULT_SUNSET_AT } from "./schemas.ts";
import type { BreakerOptions } from "./storage/breaker.ts";
import { Breaker, checkBreaker } from "./storage/breaker.ts";
import { cannotHang } from "./storage/capabilities.ts";
import { redactUrl } from "./storage/config-error.ts";
import { invalidRecordOf, reportFailuresOnce, StorageWarning } from "./storage/failures.ts";
import type { GuardedCall } from "./storage/guard.ts";
import { guardStorage } from "./storage/guard.ts";
import { UNFINISHED_IMPORT, watchImports } from "./storage/import-watch.ts";
import { memoryStorage } from "./storage/memory/index.ts";
import type { PetStorage, RateCounter } from "./storage/port.ts";
import { ReadClock } from "./storage/read-clock.ts";
import { reportStorageTo } from "./storage/report-to.ts";
import { writeCountOf } from "./storage/write-count.ts";
import type { TracerProviderLike } from "./tracer-provider.ts";
import { checkTracerProvider, Tracing, traceStorage } from "./tracing.ts";
import { VERSION } from "./version.ts";

export interface PetStoreOptions {
  /** Where pets live. Default: `memoryStorage()`. */
  storage?: PetStorage;
  /**
   * Required: a list of API keys, `apiKeys([...])` (named, scoped keys), `jwt({ issuer, audience })`
   * (OAuth 2.0 access tokens), a verify function `(token) => boolean | { id, scopes }`, or
   * `{ keys, verify, failureLimit, trustProxy }`. See docs/auth.md.
   */
  auth: AuthOption;
  /** Base path of every route (default "/v1"). */
  basePath?: string;
  /** Largest accepted request body in bytes (default 65536). */
  maxBodyBytes?: number;
  /** Time a storage call may take before it answers 503 storage_unavailable (default 2000 ms). */
  operationTimeoutMs?: number;
  /** When getPet was deprecated (the `Deprecation` header). Default 2026-11-25. */
  deprecatedAt?: Date;
  /** When getPet goes away (the `Sunset` header). Default 2030-12-05. */
  sunsetAt?: Date;
  /**
   * Called with every unexpected error (answered 500), every invalid stored record (at most once
   * per key per minute: its `cause` is an `InvalidRecordError` with backend, key and reason), every
   * storage failure (a `storage_unavailable` PetStoreError with the driver's error as `cause`, at
   * most once a minute per distinct error), what a storage repaired by itself (a `StorageWarning`),
   * and every failure of a business rule (see `rules`).
   */
  onError?: (error: unknown) => void;
  /** How long an `Idempotency-Key` is kept, in ms (default 86400000, 24 hours); after it the key is new again. */
  idempotencyTtlMs?: number;
  /** The clock of idempotency retention, ms since the epoch (default `Date.now`; tests pass their own). */
  clock?: () => number;
  /**
   * The application's own business rules, applied on every path (any adapter, and `createPet`):
   * `beforeCreate` may refuse a create with a `RuleViolation`; `afterCreate` runs once the pet is
   * stored; `codes` lists the rule codes in the served OpenAPI document. See docs/rules.md.
   */
  rules?: PetStoreRules;
  /**
   * Called with each answered request `{ kind: "request", method, route, status, durationMs,
   * requestId }` and each storage call `{ kind: "storage", operation, backend, durationMs, failed }`,
   * for metrics (see lib/observe.ts). It never changes an answer: what it throws goes to `onError`.
   */
  observe?: Observer;
  /**
   * The storage breaker (on by default): after `failures` failed storage calls in a row (5) the
   * store answers `503 storage_unavailable` at once instead of waiting on a backend known to be
   * down, lets one probe call through every `probeIntervalMs` (250), and closes on the first
   * success. `false` turns it off. Memory storage has none. See docs/STORAGE.md.
   */
  breaker?: BreakerOptions | false;
  /**
   * CORS for browser pages of other origins (off by default): `{ origins: ["https://shop.example"] }`
   * or `{ origins: "*" }`, and `maxAge` (seconds a preflight is kept, default 600). A preflight from
   * an allowed origin is answered before the key; every answer to it exposes the contract's
   * headers. Other origins are answered as before, without CORS headers.
   */
  cors?: CorsOptions;
  /**
   * Rate limits (off by default): each caller (the scope of its key) may make `limit` requests in
   * each fixed window of `windowSeconds`; past it, `429 rate_limited` with `Retry-After`. Counted
   * across every process on SQLite, Redis and Postgres storage, per process on memory. Every
   * counted answer carries `RateLimit-Policy` and `RateLimit`. See docs/SECURITY.md.
   */
  rateLimit?: RateLimitOptions;
  /**
   * What `Cache-Control` says (contract 1.4): by default `private, no-cache` on answers to a
   * caller (browsers keep them and revalidate with `If-None-Match`, a cheap `304`) and `no-store`
   * on errors. `petMaxAge` and `pageMaxAge` (seconds) let browsers reuse a pet or a full page
   * without asking; `noTransform` forbids compressing; `noStore` keeps nothing. See docs/caching.md.
   */
  cacheControl?: CacheControlOptions;
  /**
   * Where spans go (contract 1.3, "Traces"): by default the tracer provider registered with
   * `@opentelemetry/api`, when that optional peer is installed (else nothing is traced). See
   * docs/tracing.md.
   */
  tracerProvider?: TracerProviderLike;
}

/** A store's answer to one request, without a promise when nothing had to wait. */
export type Respond = (request: PetStoreRequest) => Awaitable<PetStoreResponse>;

/** A store's answer to one request, always as a promise. */
export type Handle = (request: PetStoreRequest) => Promise<PetStoreResponse>;

export interface PetStore extends Operations {
  /** Answers one HTTP-neutral request with a promise; never rejects. */
  handle: Handle;
  /**
   * Answers one request: the response itself when nothing had to wait (a page from memory
   * storage), else a promise of it. Never throws or rejects. The fast path for adapters, which
   * can then write the response in the same tick: `isPromise(r) ? r.then(write) : write(r)`.
   */
  respond: Respond;
  /**
   * True when a real read of the storage succeeded within the last second (a ping says nothing of
   * the data): a request's read, else one `ready()` makes itself. False while the breaker is open.
   */
  ready(): Promise<boolean>;
  /**
   * `ready()` with the reason when not: the storage does not answer, or an import into it is
   * unfinished (contract 1.4: reads are served, creates refused until it is finished or abandoned).
   * @example const { ready, reason } = await store.readiness()
   */
  readiness(): Promise<Readiness>;
  /** Closes the storage. Idempotent. */
  close(): Promise<void>;
  readonly basePath: string;
  readonly maxBodyBytes: number;
}

/** What `readiness()` answers. */
export interface Readiness {
  ready: boolean;
  /** Why not, in words for an operator: present when `ready` is false. */
  reason?: string;
}

/** What readiness says when the storage does not answer. */
const NOT_ANSWERING = "the storage does not answer";

/** What an adapter needs of a store: its answers, where it lives and how large a body it takes. */
export type AdapterStore = Pick<PetStore, "respond" | "basePath" | "maxBodyBytes">;

const FAILURE_COUNTER_FAILED =
  "petstore: the storage's rate counter failed while counting a failed authentication; this process counts them alone until it answers again";

const COUNTER_FAILED =
  "petstore: the storage's rate limit counter failed; each process counts its own callers until it answers again";

const OPTIONS = [
  "storage",
  "auth",
  "basePath",
  "maxBodyBytes",
  "operationTimeoutMs",
  "deprecatedAt",
  "sunsetAt",
  "onError",
  "idempotencyTtlMs",
  "clock",
  "rules",
  "observe",
  "breaker",
  "cors",
  "rateLimit",
  "tracerProvider",
  "cacheControl",
];

/** Throws a clear TypeError for an option that is unknown or not what it must be. */
function checkOptions(options: PetStoreOptions): void {
  if (options === null || typeof options !== "object") throw new TypeError("createPetStore: options are required");
  checkOptionNames("createPetStore", options, OPTIONS);
  const storage = options.storage as unknown;
  if (storage !== undefined && !isStorage(storage)) {
    throw new TypeError(`createPetStore: storage must be a PetStorage${storageHint(storage)}`);
  }
  // A string is a key (or keys joined by commas), never read as one: say what to pass instead, without the key.
  if (typeof options.auth === "string") {
    throw new TypeError(
      'createPetStore: auth must be a list of keys, not a string: auth: [key] (keys in one string: key.split(",")), apiKeys([key]), { keys: [key] } or a verify function (token) => boolean',
    );
  }
  for (const name of ["deprecatedAt", "sunsetAt"] as const) {
    const date = options[name] as unknown;
    if (date !== undefined && !(date instanceof Date && !Number.isNaN(date.getTime()))) {
      throw new TypeError(`createPetStore: ${name} must be a valid Date`);
    }
  }
  if (options.clock !== undefined && typeof options.clock !== "function") {
    throw new TypeError("createPetStore: clock must be a function () => number (ms since the epoch)");
  }
  if (options.onError !== undefined && typeof options.onError !== "function") {
    throw new TypeError("createPetStore: onError must be a function (error) => void");
  }
  if (options.observe !== undefined && typeof options.observe !== "function") {
    throw new TypeError("createPetStore: observe must be a function (observation) => void");
  }
}

/** The default `onError`: the console, a repaired storage's note as a warning. */
function reportToConsole(error: unknown): void {
  if (error instanceof StorageWarning) console.warn(`petstore: ${error.message}`);
  else if (isPetStoreError(error, "storage_unavailable")) console.error("petstore: storage failed", error.cause);
  else console.error("petstore: unexpected error", error);
}

/** What to do instead of passing `storage`: await a promise; open a storage URL with openStorage. */
function storageHint(storage: unknown): string {
  if (isPromise(storage as Awaitable<unknown>)) return "; did you forget await?";
  if (typeof storage !== "string") return "";
  return `; a string is a storage URL: pass storage: await openStorage(${JSON.stringify(redactUrl(storage))})`;
}

function isStorage(value: unknown): value is PetStorage {
  const candidate = value as Partial<Record<keyof PetStorage, unknown>> | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    typeof candidate.kind === "string" &&
    ["create", "get", "list", "ping", "close"].every((m) => typeof candidate[m as keyof PetStorage] === "function")
  );
}

function checkBasePath(basePath: string): string {
  if (basePath === "" || basePath === "/") return "";
  if (typeof basePath !== "string" || !BASE_PATH_PATTERN.test(basePath)) {
    throw new TypeError(`createPetStore: basePath must look like "/v1" (got ${JSON.stringify(basePath)})`);
  }
  return basePath;
}

function checkPositive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`createPetStore: ${name} must be a positive integer (got ${value})`);
  }
  return value;
}

/** The storage's shared counter (when it has one), each lease a storage call through the store's guard. */
function guardCounter(counter: RateCounter | undefined, guard: GuardedCall): RateCounter | undefined {
  return counter === undefined ? undefined : { lease: async (lease) => guard("rateLimit", () => counter.lease(lease)) };
}

/** The store's limiter over its guarded counter. */
function makeRateLimiter(
  rateLimit: RateLimitOptions,
  counter: RateCounter | undefined,
  onError: (error: unknown) => void,
): RateLimiter {
  return new RateLimiter(rateLimit, {
    counter,
    onCounterError: (error) => onError(new Error(COUNTER_FAILED, { cause: error })),
  });
}

/** What the handler calls with each refused request: `rateLimit.onLimited` and `observe`, when given. */
function tellRefusals(rateLimit: RateLimitOptions, observe: Observer | undefined, onError: (error: unknown) => void) {
  const { limit, windowSeconds } = rateLimit;
  const onLimited = rateLimit.onLimited === undefined ? undefined : safeObserver(rateLimit.onLimited, onError);
  if (onLimited === undefined && observe === undefined) return undefined;
  return (scope: string, verdict: RateVerdict) => {
    const refusal: RateLimitObservation = { kind: "rateLimited", scope, first: verdict.first, limit, windowSeconds };
    onLimited?.(refusal);
    observe?.(refusal);
  };
}

/** The store's throttle of failed authentications, telling `onThrottled`; none when turned off. */
function openFailureThrottle(
  limit: FailureLimitOptions | undefined,
  counter: RateCounter | undefined,
  onError: (error: unknown) => void,
): FailureThrottle | undefined {
  if (limit === undefined) return undefined;
  return new FailureThrottle(limit, {
    counter,
    onCounterError: (error) => onError(new Error(FAILURE_COUNTER_FAILED, { cause: error })),
    onThrottled: limit.onThrottled === undefined ? undefined : safeObserver(limit.onThrottled, onError),
  });
}

/** The store's breaker, telling `onChange` and `observe`; none when turned off. */
function openBreaker(storage: PetStorage, options: BreakerOptions | false, observe: Observer | undefined) {
  if (options === false) return undefined;
  const { onChange } = options;
  return new Breaker(storage.kind, options, (change) => {
    try {
      onChange?.(change);
    } catch {}
    observe?.(change);
  });
}

/**
 * Creates a pet store.
 *
 * @example
 *   const store = createPetStore({ auth: ["my-key"] });
 *   const pet = await store.createPet({ name: "Rex", categoryId: 1 });
 *   const res = await store.handle({ method: "GET", path: "/v1/pets", headers: { authorization: "Bearer my-key" } });
 */
export function createPetStore(options: PetStoreOptions): PetStore {
  checkOptions(options);
  const auth = checkAuth(options.auth);
  const storage = options.storage ?? memoryStorage();
  const basePath = checkBasePath(options.basePath ?? "/v1");
  const maxBodyBytes = checkPositive("maxBodyBytes", options.maxBodyBytes ?? 64 * 1024);
  const timeoutMs = checkPositive("operationTimeoutMs", options.operationTimeoutMs ?? 2000);
  const report = reportFailuresOnce(options.onError ?? reportToConsole);
  const rules = checkRules(options.rules);
  const ttlMs = checkPositive("idempotencyTtlMs", options.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS);
  const observe = options.observe === undefined ? undefined : safeObserver(options.observe, report);
  // Each invalid record met is observed (a metric counts them all); its report comes once a minute.
  const onError =
    observe === undefined
      ? report
      : (error: unknown) => {
          const record = invalidRecordOf(error);
          if (record !== undefined) observe({ kind: "invalidRecord", backend: record.backend });
          report(error);
        };
  // Storage that cannot hang needs no breaker and no timer, and answers readiness from a read of its own each time.
  const mayHang = !cannotHang(storage);
  const breakerOptions = checkBreaker(options.breaker);
  const breaker = mayHang ? openBreaker(storage, breakerOptions, observe) : undefined;
  const cors = checkCors(options.cors);
  const caching = cachePolicy(checkCacheControl(options.cacheControl));
  const reads = mayHang ? new ReadClock() : undefined;
  const rateLimit = checkRateLimit(options.rateLimit);
  const tracing = new Tracing(storage.kind, checkTracerProvider(options.tracerProvider), VERSION);
  const guard = traceStorage(
    guardStorage({
      timeoutMs: mayHang ? timeoutMs : undefined,
      backend: storage.kind,
      observe,
      breaker,
      reads,
      report: (failure) => onError(failure),
    }),
    tracing,
  );
  const counter = guardCounter(storage.rateCounter, guard);
  const rateLimiter = rateLimit === undefined ? undefined : makeRateLimiter(rateLimit, counter, onError);
  const imports = watchImports(storage, guard);
  reportStorageTo(storage, (error) => onError(error));
  const ops = createOperations(storage, {
    guard,
    imports,
    timeoutMs,
    rules,
    onError: (error) => onError(error),
    ttlMs,
    clock: options.clock ?? Date.now,
  });
  const { handle, respond } = createHandler(ops, {
    basePath,
    maxBodyBytes,
    verify: auth.verify,
    failures: openFailureThrottle(auth.failureLimit, counter, onError),
    trustProxy: auth.trustProxy,
    deprecatedAt: Math.floor((options.deprecatedAt ?? DEFAULT_DEPRECATED_AT).getTime() / 1000),
    sunset: options.sunsetAt ?? DEFAULT_SUNSET_AT,
    onError: (error) => onError(error),
    observe,
    tracing,
    cors: cors === undefined ? undefined : createCors(cors, { rateLimited: rateLimit !== undefined }),
    writeCount: writeCountOf(storage),
    cachePolicy: caching,
    rateLimiter,
    onLimited: rateLimit === undefined ? undefined : tellRefusals(rateLimit, observe, onError),
    publicRoutes: {
      "openapi.json": openApiRoute({
        basePath,
        deprecatedAt: options.deprecatedAt,
        sunsetAt: options.sunsetAt,
        idempotencyTtlMs: ttlMs,
        ruleCodes: rules?.codes,
        openIdConfigurationUrls: auth.openIdConfigurationUrls,
        cors: cors !== undefined,
      }),
    },
  });
  /** An in-process call: what it rejects with is the caller's to handle; an unexpected failure is reported too. */
  const inProcess = async <T>(operation: string, call: () => Awaitable<T>): Promise<T> => {
    try {
      return await (tracing.on ? tracing.inProcess(operation, async () => call()) : call());
    } catch (error) {
      if (isPetStoreError(error, "internal_error")) onError(error);
      throw error;
    }
  };
  let closing: Promise<void> | undefined;
  /** The read of `ready()` under way: probes that come together share it. */
  let readying: Promise<boolean> | undefined;
  /** A real read (one pet), not a ping; an invalid stored value means the backend answered. */
  const readOnce = async () => {
    try {
      await guard("ready", () => storage.list({ after: 0, limit: 1 }));
      return true;
    } catch (error) {
      return isPetStoreError(error, "internal_error");
    }
  };

  /** Whether the storage answered a read lately, else after one now (probes that come together share it). */
  const readLately = (): Promise<boolean> => {
    if (reads?.readLately() === true && breaker?.isOpen !== true) return Promise.resolve(true);
    if (readying === undefined) {
      const read = readOnce();
      readying = read;
      read.then(() => {
        readying = undefined;
      });
    }
    return readying;
  };
  const readiness = async (): Promise<Readiness> => {
    if (imports !== undefined) {
      try {
        // A probe waits on a fresh read of the mark when one is due: it tells a finished import at once.
        if ((await imports.latest()) !== undefined) return { ready: false, reason: UNFINISHED_IMPORT };
      } catch (error) {
        // A mark that cannot be read fails closed; a storage that does not answer says so.
        const reason = isPetStoreError(error, "internal_error") ? UNFINISHED_IMPORT : NOT_ANSWERING;
        return { ready: false, reason };
      }
    }
    return (await readLately()) ? { ready: true } : { ready: false, reason: NOT_ANSWERING };
  };

  return {
    listPets: (query) => inProcess("listPets", () => ops.listPets(checkListQuery(query))),
    createPet: ((input: unknown, options?: CreateContext & Partial<IdempotentCreateOptions>) =>
      inProcess("createPet", () => {
        const caller = rules === undefined ? undefined : inProcessCaller(options);
        if (options === undefined || options === null || !("idempotencyKey" in options)) {
          return ops.createPet(input, caller);
        }
        return ops.createPetOnce(input, checkIdempotentOptions(options as IdempotentCreateOptions), caller);
      })) as Operations["createPet"],
    getPet: (id) => inProcess("getPet", () => ops.getPet(id)),
    handle,
    respond,
    basePath,
    maxBodyBytes,
    ready() {
      if (imports === undefined && reads?.readLately() === true && breaker?.isOpen !== true) {
        return Promise.resolve(true);
      }
      return readiness().then((answer) => answer.ready);
    },
    readiness,
    close() {
      closing ??= storage.close();
      return closing;
    },
  };
}
