/**
 * Fault injection of the test kit. `failNext(n, { status, operation? })` makes the next `n` calls
 * of the storage that reach an operation fail, thrown by the storage the store is given, so they go
 * through the same code as a real fault: same status, headers and body. `{ after: "commit" }` and
 * `{ reset: true }` lose the connection instead (testing/kit.ts): after the store carried out the
 * request, or before it is read.
 */
import type { Awaitable } from "../lib/adapter.ts";
import type { Pet } from "../lib/entries/schemas.ts";
import type { IdempotencyRecord, PetData, PetStorage } from "../lib/entries/storage.ts";
import { PetStoreError } from "../lib/index.ts";

/** The operations a failure can be aimed at. */
export type TestOperation = "listPets" | "createPet" | "getPet";

/**
 * What `failNext(n, options)` does to each of the next `n` requests (of `operation`, when given):
 * - `{ status: 503 | 500 }`: those that reach the operation fail as a storage fault would
 *   (`503 storage_unavailable` with `Retry-After: 1`, or `500 internal_error`);
 * - `{ after: "commit" }`: those the store carries out (a 2xx answer: a create is stored) lose
 *   their answer: the connection is closed without one;
 * - `{ reset: true }`: the connection is closed before the request is read: the store never sees it.
 */
export type FailOptions =
  | { status: 503 | 500; operation?: TestOperation }
  | { after: "commit"; operation?: TestOperation }
  | { reset: true; operation?: TestOperation };

/** The three kinds of failure, as queued. */
export type FaultKind = 503 | 500 | "after-commit" | "reset";

const OPERATIONS: readonly TestOperation[] = ["listPets", "createPet", "getPet"];

/** The failure the kit injects, recognisable in `onError` and as the `cause` of a lost connection. */
export class InjectedFault extends Error {
  constructor(kind: FaultKind) {
    const what = typeof kind === "number" ? `status ${kind}` : kind === "reset" ? "reset: true" : 'after: "commit"';
    super(`failure injected by petstore-lib/testing (failNext, ${what})`);
    this.name = "InjectedFault";
  }
}

/**
 * What an in-process request rejects with when the kit loses its connection: fetch's own error for
 * a network failure (a `TypeError`), its cause the injected fault.
 */
export function lostConnection(kind: "after-commit" | "reset"): TypeError {
  return new TypeError("fetch failed", { cause: new InjectedFault(kind) });
}

/** True for the error of a connection the kit lost on purpose. */
export function isLostConnection(error: unknown): boolean {
  return error instanceof TypeError && error.cause instanceof InjectedFault;
}

/** The kind `failNext` was asked for, checked: a mistake in a test is a TypeError, not a silent no-op. */
function kindOf(fail: FailOptions): FaultKind {
  const { status, after, reset } = (fail ?? {}) as { status?: unknown; after?: unknown; reset?: unknown };
  const given = [status, after, reset].filter((v) => v !== undefined).length;
  if (given !== 1) {
    throw new TypeError('failNext: give one of { status: 503 | 500 }, { after: "commit" } or { reset: true }');
  }
  if (after !== undefined) {
    if (after !== "commit") throw new TypeError(`failNext: after must be "commit" (got ${JSON.stringify(after)})`);
    return "after-commit";
  }
  if (reset !== undefined) {
    if (reset !== true) throw new TypeError(`failNext: reset must be true (got ${JSON.stringify(reset)})`);
    return "reset";
  }
  if (status !== 503 && status !== 500) {
    throw new TypeError(`failNext: status must be 503 or 500 (got ${JSON.stringify(status)})`);
  }
  return status;
}

/** The failures asked for and not yet spent, oldest first. */
export class Faults {
  private pending: { remaining: number; kind: FaultKind; operation: TestOperation | undefined }[] = [];

  /** Queues `n` failures (checked). */
  add(n: number, fail: FailOptions): void {
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new TypeError(`failNext: n must be a positive integer (got ${JSON.stringify(n)})`);
    }
    const kind = kindOf(fail);
    const operation = (fail as { operation?: TestOperation }).operation;
    if (operation !== undefined && !OPERATIONS.includes(operation)) {
      throw new TypeError(
        `failNext: operation must be one of ${OPERATIONS.join(", ")} (got ${JSON.stringify(operation)})`,
      );
    }
    this.pending.push({ remaining: n, kind, operation });
  }

  /** The status of the failure this storage call of `operation` must meet, or undefined (it runs). */
  take(operation: TestOperation): 503 | 500 | undefined {
    const kind = this.spend((k) => typeof k === "number", operation);
    return kind as 503 | 500 | undefined;
  }

  /** True (and one is spent) when a failure of `kind` waits for a request of `operation`. */
  takeLoss(kind: "after-commit" | "reset", operation: TestOperation | undefined): boolean {
    return this.spend((k) => k === kind, operation) !== undefined;
  }

  private spend(matches: (kind: FaultKind) => boolean, operation: TestOperation | undefined): FaultKind | undefined {
    const fault = this.pending.find((f) => matches(f.kind) && (f.operation === undefined || f.operation === operation));
    if (fault === undefined) return undefined;
    fault.remaining--;
    if (fault.remaining === 0) this.pending = this.pending.filter((f) => f !== fault);
    return fault.kind;
  }

  clear(): void {
    this.pending = [];
  }
}

/**
 * The storage the store is given: the real one, with failures injected on demand. It is never
 * `inProcess`: the core then checks every value and times every call, as it does over a backend.
 */
export function faultyStorage(real: PetStorage, faults: Faults): PetStorage {
  function call<T>(operation: TestOperation, run: () => Awaitable<T>): Awaitable<T> {
    const status = faults.take(operation);
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
    // Idempotent creates are creates: failNext({ operation: "createPet" }) counts them too.
    ...(real.createOnce === undefined
      ? {}
      : {
          createOnce: (pet: PetData, record: IdempotencyRecord) =>
            call("createPet", () => (real.createOnce as NonNullable<PetStorage["createOnce"]>)(pet, record)),
        }),
    // The look-up before the rules is part of the same create: a fault is injected at the write.
    ...(real.findOnce === undefined ? {} : { findOnce: (record: IdempotencyRecord) => real.findOnce?.(record) }),
    get: (id) => call("getPet", () => real.get(id)),
    list: (page) => call("listPets", () => real.list(page)),
    ping: () => real.ping(),
    close: () => real.close(),
    // The rate limits' count is not an operation: no fault is injected into it.
    ...(real.rateCounter === undefined ? {} : { rateCounter: real.rateCounter }),
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
