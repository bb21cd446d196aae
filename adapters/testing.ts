/**
 * `petstore-lib/testing`: the Pet Store as a test double, for code that calls the API and code
 * that embeds it. `startTestServer()` is a real server on 127.0.0.1 and a free port;
 * `createTestStore()` the same in process, with `request()` instead of a socket. Both can be
 * seeded, reset between tests, slowed down and made to fail, from code only: no request turns
 * any of it on, and neither `npm start` nor `createPetStore` has a switch for it.
 *
 * Failures are injected into the storage the store is given (a decorator around it), so they go
 * through the same code as a real storage fault: same status, headers and body. No test runner is
 * imported.
 *
 * @example
 *   const server = await startTestServer({ pets: 3 });
 *   await fetch(`${server.url}/pets`, { headers: { authorization: `Bearer ${server.key}` } });
 *   server.failNext(1, { status: 503 });
 *   await server.reset();
 *   await server.close();
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type {
  Awaitable,
  NewPetInput,
  Pet,
  PetStorage,
  PetStore,
  PetStoreRequest,
  PetStoreResponse,
  PetStoreRules,
} from "../lib/index.ts";
import { createPetStore, isPromise, memoryStorage, openStorage, PetStoreError } from "../lib/index.ts";
import { createNodeHandler } from "./node-http.ts";

/** The operations a failure can be aimed at. */
export type TestOperation = "listPets" | "createPet" | "getPet";

export interface FailOptions {
  /** 503 (`storage_unavailable`, with `Retry-After: 1`) or 500 (`internal_error`). */
  status: 503 | 500;
  /** Only requests that reach this operation fail (default: any operation). */
  operation?: TestOperation;
}

export interface TestKitOptions {
  /** Pets to seed at start and at every `reset()`: a list of NewPets, or a count (names `pet-1`, `pet-2`…). */
  pets?: readonly NewPetInput[] | number;
  /** A `PetStorage`, or a storage string as `PETSTORE_STORAGE` takes (`sqlite:…`, `redis://…`). Default: memory. */
  storage?: PetStorage | string;
  /** Base path (default "/v1"). */
  basePath?: string;
  /** Delay every answer by this many ms from the start (default 0); `delay(ms)` changes it. */
  delayMs?: number;
  /** The API key the store accepts (default "test-key"). */
  key?: string;
  /** Business rules, as `createPetStore({ rules })` takes them: to test an embedding application's rules. */
  rules?: PetStoreRules;
  /**
   * `"sequential"`: answers to requests without an `X-Request-Id` carry `req-1`, `req-2`…
   * (from 1 again after `reset()`), instead of random ids. Default: random, as in production.
   */
  requestIds?: "random" | "sequential";
  /** Unexpected errors (answered 500). Default: printed, except the failures this kit injects. */
  onError?: (error: unknown) => void;
}

/** What both `startTestServer` and `createTestStore` give. */
export interface TestKit {
  /** The API key to send: `Authorization: Bearer ${key}`. */
  readonly key: string;
  /** The store behind it, for seeding or reading pets without HTTP (`store.createPet(…)`). */
  readonly store: PetStore;
  /**
   * Empties the store (only its own namespace on Redis, its own tables on SQL), seeds it again,
   * and cancels pending failures and the delay (back to `delayMs`). Ids start again at 1 on memory.
   */
  reset(): Promise<void>;
  /** The next `n` requests that reach an operation (after routing, auth and input checks) fail as a real fault would. */
  failNext(n: number, options: FailOptions): void;
  /** Delays every answer by `ms` (0 stops it). */
  delay(ms: number): void;
  /** Stops the server (if any) and closes the storage. Idempotent. */
  close(): Promise<void>;
}

export interface TestServer extends TestKit {
  /** e.g. "http://127.0.0.1:54321/v1": the base URL, base path included. */
  readonly url: string;
}

/** What `TestStore.request` resolves: like hapi's `server.inject`. */
export interface TestResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The body text ("" for HEAD). */
  body: string;
  /** The body parsed, when it is JSON; else undefined. */
  json: unknown;
}

export interface TestRequestOptions {
  /** An object is sent as JSON with `Content-Type: application/json`; a string or bytes as they are. */
  body?: unknown;
  /** Extra headers; `authorization` replaces the test key (`undefined` sends none). */
  headers?: Record<string, string | string[] | undefined>;
}

export interface TestStore extends TestKit {
  readonly basePath: string;
  /** Sends one request through `store.handle()`, with the test key: `path` is absolute (`/v1/pets?limit=5`). */
  request(method: string, path: string, options?: TestRequestOptions): Promise<TestResponse>;
}

const OPERATIONS: readonly TestOperation[] = ["listPets", "createPet", "getPet"];
const KIT_OPTIONS = new Set(["pets", "storage", "basePath", "delayMs", "key", "rules", "requestIds", "onError"]);

/** The failure the kit injects, recognisable in `onError`. */
class InjectedFault extends Error {
  constructor(status: number) {
    super(`failure injected by petstore-lib/testing (failNext, status ${status})`);
    this.name = "InjectedFault";
  }
}

function checkMs(name: string, ms: unknown): number {
  if (typeof ms !== "number" || !Number.isSafeInteger(ms) || ms < 0) {
    throw new TypeError(`${name} must be an integer number of milliseconds, 0 or more (got ${JSON.stringify(ms)})`);
  }
  return ms;
}

function checkKitOptions(options: TestKitOptions): void {
  if (options === null || typeof options !== "object") throw new TypeError("testing: options must be an object");
  for (const name of Object.keys(options)) {
    if (!KIT_OPTIONS.has(name)) {
      throw new TypeError(`testing: unknown option "${name}" (known: ${[...KIT_OPTIONS].join(", ")})`);
    }
  }
  const { pets } = options;
  if (
    pets !== undefined &&
    !Array.isArray(pets) &&
    !(typeof pets === "number" && Number.isSafeInteger(pets) && pets >= 0)
  ) {
    throw new TypeError("testing: pets must be a list of NewPets or a count (an integer, 0 or more)");
  }
  if (options.delayMs !== undefined) checkMs("testing: delayMs", options.delayMs);
  if (options.key !== undefined && (typeof options.key !== "string" || !/^[\x21-\x7e]{1,256}$/.test(options.key))) {
    throw new TypeError("testing: key must be 1 to 256 visible ASCII characters");
  }
  if (options.requestIds !== undefined && options.requestIds !== "random" && options.requestIds !== "sequential") {
    throw new TypeError('testing: requestIds must be "random" or "sequential"');
  }
}

/** The pets a seed creates: the list as given, or `count` pets with stable names. */
function seedList(pets: TestKitOptions["pets"]): readonly NewPetInput[] {
  if (pets === undefined) return [];
  if (typeof pets === "number") {
    return Array.from({ length: pets }, (_, i) => ({ name: `pet-${i + 1}`, categoryId: 1 }));
  }
  return pets;
}

/**
 * The storage the store is given: the real one, with failures injected on demand. It is never
 * `inProcess` (the core then checks every value and caches nothing by id, so `reset()` can start
 * ids again at 1 under a running store).
 */
function faultyStorage(real: PetStorage, next: (operation: TestOperation) => number | undefined): PetStorage {
  function call<T>(operation: TestOperation, run: () => Awaitable<T>): Awaitable<T> {
    const status = next(operation);
    if (status === undefined) return run();
    const fault = new InjectedFault(status);
    // A PetStoreError passes the core's storage guard unchanged: a 500 internal_error; anything
    // else becomes storage_unavailable, exactly as a backend's failure does.
    if (status === 500) return Promise.reject(new PetStoreError("internal_error", undefined, { cause: fault }));
    return Promise.reject(fault);
  }
  return {
    kind: real.kind,
    create: (pet) => call("createPet", () => real.create(pet)) as Promise<Pet>,
    get: (id) => call("getPet", () => real.get(id)),
    list: (page) => call("listPets", () => real.list(page)),
    ping: () => real.ping(),
    close: () => real.close(),
    clear: () => {
      if (typeof real.clear !== "function") {
        return Promise.reject(
          new TypeError(`testing: reset() needs a storage with clear(); this ${real.kind} storage has none`),
        );
      }
      return real.clear();
    },
  };
}

/** The store, its faults and delay, and reset: what the server and the in-process kit share. */
async function openKit(options: TestKitOptions) {
  checkKitOptions(options);
  const key = options.key ?? "test-key";
  const initialDelay = options.delayMs ?? 0;
  const seeds = seedList(options.pets);
  const real =
    typeof options.storage === "string" ? await openStorage(options.storage) : (options.storage ?? undefined);
  const base = real ?? memoryStorage();

  let faults: { remaining: number; status: 503 | 500; operation: TestOperation | undefined }[] = [];
  let delayMs = initialDelay;
  let requestCount = 0;
  const nextFault = (operation: TestOperation): number | undefined => {
    const fault = faults.find((f) => f.operation === undefined || f.operation === operation);
    if (fault === undefined) return undefined;
    fault.remaining--;
    if (fault.remaining === 0) faults = faults.filter((f) => f !== fault);
    return fault.status;
  };
  const userOnError = options.onError;
  const onError =
    userOnError ??
    ((error: unknown) => {
      if ((error as { cause?: unknown })?.cause instanceof InjectedFault) return;
      console.error("petstore-lib/testing: unexpected error", error);
    });

  const storage = faultyStorage(base, nextFault);
  let store: PetStore;
  try {
    store = createPetStore({
      storage,
      auth: [key],
      ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
      ...(options.rules === undefined ? {} : { rules: options.rules }),
      onError,
    });
  } catch (error) {
    await base.close();
    throw error;
  }

  async function seed(): Promise<void> {
    for (const pet of seeds) await store.createPet(pet);
  }

  /** The store's respond, with the kit's request ids and delay. */
  function respond(request: PetStoreRequest): Promise<PetStoreResponse> {
    let r = request;
    if (options.requestIds === "sequential" && !hasHeader(request.headers, "x-request-id")) {
      r = { ...request, headers: { ...request.headers, "x-request-id": `req-${++requestCount}` } };
    }
    const answer = store.respond(r);
    const ms = delayMs;
    if (ms === 0) return isPromise(answer) ? answer : Promise.resolve(answer);
    return Promise.resolve(answer).then((a) => new Promise((resolve) => setTimeout(() => resolve(a), ms)));
  }

  const kit = {
    key,
    store,
    respond,
    async reset() {
      faults = [];
      delayMs = initialDelay;
      requestCount = 0;
      await storage.clear?.();
      await seed();
    },
    failNext(n: number, fail: FailOptions) {
      if (!Number.isSafeInteger(n) || n < 1) {
        throw new TypeError(`failNext: n must be a positive integer (got ${JSON.stringify(n)})`);
      }
      const { status, operation } = (fail ?? {}) as Partial<FailOptions>;
      if (status !== 503 && status !== 500) {
        throw new TypeError(`failNext: status must be 503 or 500 (got ${JSON.stringify(status)})`);
      }
      if (operation !== undefined && !OPERATIONS.includes(operation)) {
        throw new TypeError(
          `failNext: operation must be one of ${OPERATIONS.join(", ")} (got ${JSON.stringify(operation)})`,
        );
      }
      faults.push({ remaining: n, status, operation });
    },
    delay(ms: number) {
      delayMs = checkMs("delay", ms);
    },
  };
  try {
    await seed();
  } catch (error) {
    await store.close();
    throw error;
  }
  return kit;
}

function hasHeader(headers: PetStoreRequest["headers"], name: string): boolean {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name && headers[key] !== undefined) return true;
  return false;
}

/**
 * A real Pet Store server on 127.0.0.1 and a free port, on memory storage unless told otherwise.
 *
 * @example
 *   const server = await startTestServer({ pets: [{ name: "Rex", categoryId: 1 }] });
 *   const res = await fetch(`${server.url}/pets`, { headers: { authorization: `Bearer ${server.key}` } });
 *   await server.close();
 */
export async function startTestServer(options: TestKitOptions = {}): Promise<TestServer> {
  const kit = await openKit(options);
  const { store } = kit;
  const listener = createNodeHandler({
    basePath: store.basePath,
    maxBodyBytes: store.maxBodyBytes,
    respond: kit.respond,
  });
  const server = createServer(listener);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}${store.basePath}`,
    key: kit.key,
    store,
    reset: kit.reset,
    failNext: kit.failNext,
    delay: kit.delay,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await stopped;
        await store.close();
      })();
      return closing;
    },
  };
}

/** The body and content type `request()` sends. */
function bodyOf(body: unknown): { body: string | Uint8Array | undefined; json: boolean } {
  if (body === undefined || body === null) return { body: undefined, json: false };
  if (typeof body === "string" || body instanceof Uint8Array) return { body, json: false };
  return { body: JSON.stringify(body), json: true };
}

/**
 * The same as `startTestServer`, in process (no socket): `request()` goes through `store.handle()`.
 *
 * @example
 *   const t = await createTestStore({ pets: 2 });
 *   const { status, json } = await t.request("GET", "/v1/pets?limit=1");
 */
export async function createTestStore(options: TestKitOptions = {}): Promise<TestStore> {
  const kit = await openKit(options);
  const { store } = kit;
  let closing: Promise<void> | undefined;
  return {
    key: kit.key,
    store,
    basePath: store.basePath,
    reset: kit.reset,
    failNext: kit.failNext,
    delay: kit.delay,
    close() {
      closing ??= store.close();
      return closing;
    },
    async request(method, path, requestOptions = {}) {
      if (typeof method !== "string" || method === "") throw new TypeError("request: method must be a string");
      if (typeof path !== "string" || !path.startsWith("/")) {
        throw new TypeError(`request: path must be absolute, e.g. "/v1/pets" (got ${JSON.stringify(path)})`);
      }
      const { body, json } = bodyOf(requestOptions.body);
      const headers: Record<string, string | string[] | undefined> = { authorization: `Bearer ${kit.key}` };
      if (json) headers["content-type"] = "application/json";
      for (const [name, value] of Object.entries(requestOptions.headers ?? {})) {
        const lower = name.toLowerCase();
        if (value === undefined) delete headers[lower];
        else headers[lower] = value;
      }
      if (body !== undefined && headers["content-length"] === undefined) {
        headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
      }
      const q = path.indexOf("?");
      const response = await kit.respond({
        method: method.toUpperCase(),
        path: q === -1 ? path : path.slice(0, q),
        query: q === -1 ? "" : path.slice(q + 1),
        headers,
        body,
      });
      let parsed: unknown;
      if (response.body !== "" && response.headers["content-type"]?.startsWith("application/json")) {
        try {
          parsed = JSON.parse(response.body);
        } catch {}
      }
      return { status: response.status, headers: { ...response.headers }, body: response.body, json: parsed };
    },
  };
}
