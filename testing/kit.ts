/**
 * What the test server and the in-process test store share: the options, the store over a storage
 * with fault injection, seeding, `reset()`, `delay(ms)`, sequential request ids, the journal, and
 * the answers it loses on purpose (`failNext` with `reset` or `after: "commit"`).
 */
import { checkOptionNames, isPromise } from "../lib/adapter.ts";
import type { ApiKey, FailureLimitOptions, VerifyToken } from "../lib/entries/auth.ts";
import type { TracerProviderLike } from "../lib/entries/observe.ts";
import type { PetStorage } from "../lib/entries/storage.ts";
import { memoryStorage } from "../lib/entries/storage.ts";
import type {
  CacheControlOptions,
  NewPetInput,
  PetStore,
  PetStoreRequest,
  PetStoreResponse,
  PetStoreRules,
} from "../lib/index.ts";
import { createPetStore, openStorage } from "../lib/index.ts";
import { ensureContextManager } from "./context.ts";
import type { FailOptions, TestOperation } from "./faults.ts";
import { Faults, faultyStorage, InjectedFault, lostConnection } from "./faults.ts";
import type { RequestRecord } from "./journal.ts";
import { headerOf, Journal, recordOf } from "./journal.ts";

export interface TestKitOptions {
  /**
   * Pets to seed at start and at every `reset()`: a list of NewPets, a count (names `pet-1`,
   * `pet-2`…), or the path of an export file (`petstore export`: its pets at their ids, and its
   * idempotency keys; Node only).
   */
  pets?: readonly NewPetInput[] | number | string;
  /** A `PetStorage`, or a storage string as `PETSTORE_STORAGE` takes (`sqlite:…`, `redis://…`). Default: memory. */
  storage?: PetStorage | string;
  /** Base path (default "/v1"). */
  basePath?: string;
  /** Delay every answer by this many ms from the start (default 0); `delay(ms)` changes it. */
  delayMs?: number;
  /** The API key the store accepts (default "test-key"), with every scope. */
  key?: string;
  /**
   * More keys the store accepts, as `createPetStore({ auth: { keys } })` takes them: named and
   * scoped ones too, e.g. `[{ name: "reader", key: "read-key", scopes: ["pets:read"] }]`, to test
   * how your code meets `403 insufficient_scope`.
   */
  keys?: readonly (string | ApiKey)[];
  /** Verifiers tried after the keys, e.g. `jwt({ issuer, audience })` for access tokens of your test provider. */
  verify?: VerifyToken | readonly VerifyToken[];
  /**
   * Failed authentications per client address before `429` (`auth.failureLimit`); default `false`:
   * a test server never throttles the bad keys a test sends on purpose.
   */
  failureLimit?: number | FailureLimitOptions | false;
  /** Business rules, as `createPetStore({ rules })` takes them: to test an embedding application's rules. */
  rules?: PetStoreRules;
  /**
   * `"sequential"`: answers to requests without an `X-Request-Id` carry `req-1`, `req-2`…
   * (from 1 again after `reset()`), instead of random ids. Default: random, as in production.
   */
  requestIds?: "random" | "sequential";
  /** Unexpected errors (answered 500). Default: printed, except the failures this kit injects. */
  onError?: (error: unknown) => void;
  /**
   * Rate limits, as `createPetStore({ rateLimit })` takes them: to test how a client meets `429`.
   * `reset()` starts every caller's count again.
   */
  rateLimit?: { limit: number; windowSeconds: number };
  /**
   * Where the store's spans go (`createPetStore({ tracerProvider })`), to assert on them in your
   * tests, e.g. a provider with an `InMemorySpanExporter`. Registers a context manager for the
   * process when none is (docs/tracing.md).
   */
  tracerProvider?: TracerProviderLike;
  /**
   * What `Cache-Control` says, as `createPetStore({ cacheControl })` takes it: to test an
   * application against the caching it runs with (`petMaxAge`, `pageMaxAge`, `noTransform`, `noStore`).
   */
  cacheControl?: CacheControlOptions;
}

/** What both `startTestServer` and `createTestStore` give. */
export interface TestKit {
  /** The API key to send: `Authorization: Bearer ${key}`. */
  readonly key: string;
  /**
   * The store behind it, for seeding or reading pets without HTTP (`store.createPet(…)`). With
   * `rateLimit`, `reset()` gives a new store on the same storage (its counts start again): read it after.
   */
  readonly store: PetStore;
  /**
   * Empties the store (only its own namespace on Redis, its own tables on SQL), seeds it again,
   * and cancels pending failures and the delay (back to `delayMs`). Ids start again at 1 on memory.
   */
  reset(): Promise<void>;
  /**
   * The next `n` requests (of `options.operation`, when given) fail: with `{ status }` those that
   * reach the operation (after routing, auth and input checks) as a storage fault would; with
   * `{ after: "commit" }` those the store carries out lose their answer (the connection is closed);
   * with `{ reset: true }` the connection is closed before the request is read. See `FailOptions`.
   */
  failNext(n: number, options: FailOptions): void;
  /** The requests received since the last `reset()` (or the start), oldest first; see `RequestRecord`. */
  requests(): RequestRecord[];
  /** Delays every answer by `ms` (0 stops it). */
  delay(ms: number): void;
  /** Stops the server (if any) and closes the storage. Idempotent. */
  close(): Promise<void>;
}

const KIT_OPTIONS = [
  "pets",
  "storage",
  "basePath",
  "delayMs",
  "key",
  "keys",
  "verify",
  "failureLimit",
  "rules",
  "requestIds",
  "onError",
  "rateLimit",
  "tracerProvider",
  "cacheControl",
];

function checkMs(name: string, ms: unknown): number {
  if (typeof ms !== "number" || !Number.isSafeInteger(ms) || ms < 0) {
    throw new TypeError(`${name} must be an integer number of milliseconds, 0 or more (got ${JSON.stringify(ms)})`);
  }
  return ms;
}

function checkKitOptions(options: TestKitOptions): void {
  checkOptionNames("petstore-lib/testing", options, KIT_OPTIONS);
  const { pets } = options;
  if (
    pets !== undefined &&
    !Array.isArray(pets) &&
    !(typeof pets === "number" && Number.isSafeInteger(pets) && pets >= 0) &&
    !(typeof pets === "string" && pets !== "")
  ) {
    throw new TypeError(
      "petstore-lib/testing: pets must be a list of NewPets, a count (an integer, 0 or more) or an export file's path",
    );
  }
  if (options.delayMs !== undefined) checkMs("petstore-lib/testing: delayMs", options.delayMs);
  if (options.key !== undefined && (typeof options.key !== "string" || !/^[\x21-\x7e]{1,256}$/.test(options.key))) {
    throw new TypeError("petstore-lib/testing: key must be 1 to 256 visible ASCII characters");
  }
  if (options.requestIds !== undefined && options.requestIds !== "random" && options.requestIds !== "sequential") {
    throw new TypeError('petstore-lib/testing: requestIds must be "random" or "sequential"');
  }
}

/** The pets a seed creates: the list as given, or `count` pets with stable names (an export file seeds otherwise). */
function seedList(pets: TestKitOptions["pets"]): readonly NewPetInput[] {
  if (pets === undefined || typeof pets === "string") return [];
  if (typeof pets === "number") {
    return Array.from({ length: pets }, (_, i) => ({ name: `pet-${i + 1}`, categoryId: 1 }));
  }
  return pets;
}

/**
 * The importer of export files, loaded only when a kit is seeded from one: a Node-only module
 * (files, hashes) that a browser bundle of the kit must not include, hence no literal specifier.
 */
async function loadImporter(): Promise<typeof import("../transfer/import.ts")> {
  const own = import.meta.url;
  const url = new URL(`../transfer/import${own.slice(own.lastIndexOf("."))}`, own);
  return import(/* webpackIgnore: true */ /* @vite-ignore */ url.href);
}

/** The kit behind a test server or store: its store, and the store's answers with the kit's delay and ids. */
export interface OpenKit extends Omit<TestKit, "close"> {
  /**
   * The store's answer, with the kit's request ids, delay and journal; rejects (a `TypeError`
   * whose cause is an `InjectedFault`) when `failNext` loses the connection, which the server
   * then closes without an answer.
   */
  respond(request: PetStoreRequest): Promise<PetStoreResponse>;
}

/** The operation a request is routed to (by method and path), if any. */
function operationOf(request: PetStoreRequest, basePath: string): TestOperation | undefined {
  const { method, path } = request;
  const read = method === "GET" || method === "HEAD";
  if (path === `${basePath}/pets`) return method === "POST" ? "createPet" : read ? "listPets" : undefined;
  const id = path.startsWith(`${basePath}/pets/`) ? path.slice(basePath.length + 6) : undefined;
  return read && id !== undefined && id !== "" && !id.includes("/") ? "getPet" : undefined;
}

/** The store, its faults and delay, and reset: what the server and the in-process kit share. */
export async function openKit(options: TestKitOptions): Promise<OpenKit> {
  checkKitOptions(options);
  const key = options.key ?? "test-key";
  const initialDelay = options.delayMs ?? 0;
  const seeds = seedList(options.pets);
  const real =
    typeof options.storage === "string" ? await openStorage(options.storage) : (options.storage ?? undefined);
  const base = real ?? memoryStorage();

  const faults = new Faults();
  const journal = new Journal();
  let delayMs = initialDelay;
  let requestCount = 0;
  const userOnError = options.onError;
  const onError =
    userOnError ??
    ((error: unknown) => {
      if ((error as { cause?: unknown })?.cause instanceof InjectedFault) return;
      console.error("petstore-lib/testing: unexpected error", error);
    });

  const storage = faultyStorage(base, faults);
  const makeStore = () =>
    createPetStore({
      storage,
      auth: {
        keys: [key, ...(options.keys ?? [])],
        ...(options.verify === undefined ? {} : { verify: options.verify }),
        failureLimit: options.failureLimit ?? false,
      },
      // failNext(n) fails exactly n requests: no breaker turns the next ones into 503s too.
      breaker: false,
      ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
      ...(options.rules === undefined ? {} : { rules: options.rules }),
      ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
      ...(options.cacheControl === undefined ? {} : { cacheControl: options.cacheControl }),
      ...(options.tracerProvider === undefined ? {} : { tracerProvider: options.tracerProvider }),
      onError,
    });
  if (options.tracerProvider !== undefined) ensureContextManager();
  let store: PetStore;
  try {
    store = makeStore();
  } catch (error) {
    await base.close();
    throw error;
  }

  async function seed(): Promise<void> {
    if (typeof options.pets === "string") await (await loadImporter()).importFile(base, options.pets);
    for (const pet of seeds) await store.createPet(pet);
  }

  /** The store's answer with the kit's request ids and delay, unless a fault loses it. */
  function answer(request: PetStoreRequest): Promise<PetStoreResponse> {
    let r = request;
    if (options.requestIds === "sequential" && headerOf(request.headers, "x-request-id") === undefined) {
      r = { ...request, headers: { ...request.headers, "x-request-id": `req-${++requestCount}` } };
    }
    const answer = store.respond(r);
    const ms = delayMs;
    if (ms === 0) return isPromise(answer) ? answer : Promise.resolve(answer);
    return Promise.resolve(answer).then((a) => new Promise((resolve) => setTimeout(() => resolve(a), ms)));
  }

  /** The answer as the kit gives it: journalled, and lost when a fault asks for it. */
  async function respond(request: PetStoreRequest): Promise<PetStoreResponse> {
    const operation = operationOf(request, store.basePath);
    if (faults.takeLoss("reset", operation)) {
      journal.add(recordOf(request, undefined, "reset"));
      throw lostConnection("reset");
    }
    const response = await answer(request);
    const done = response.status >= 200 && response.status < 300 && operation !== undefined;
    if (done && faults.takeLoss("after-commit", operation)) {
      journal.add(recordOf(request, response, "after-commit"));
      throw lostConnection("after-commit");
    }
    journal.add(recordOf(request, response));
    return response;
  }

  const kit = {
    key,
    get store() {
      return store;
    },
    respond,
    async reset() {
      faults.clear();
      journal.clear();
      delayMs = initialDelay;
      requestCount = 0;
      // The counts of rate limits live in the store (memory) or its storage (cleared below).
      if (options.rateLimit !== undefined) store = makeStore();
      await storage.clear?.();
      await seed();
    },
    failNext(n: number, fail: FailOptions) {
      faults.add(n, fail);
    },
    delay(ms: number) {
      delayMs = checkMs("delay", ms);
    },
    requests: () => journal.list(),
  };
  try {
    await seed();
  } catch (error) {
    await store.close();
    throw error;
  }
  return kit;
}
