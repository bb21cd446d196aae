/**
 * Fault injection of the test kit: `failNext(n, { status, operation? })` makes the next `n` calls
 * of the storage that reach an operation fail, and the storage the store is given throws them
 * there, so they go through the same code as a real fault: same status, headers and body.
 */
import type { Awaitable, IdempotencyRecord, Pet, PetData, PetStorage } from "../lib/index.ts";
import { PetStoreError } from "../lib/index.ts";

/** The operations a failure can be aimed at. */
export type TestOperation = "listPets" | "createPet" | "getPet";

export interface FailOptions {
  /** 503 (`storage_unavailable`, with `Retry-After: 1`) or 500 (`internal_error`). */
  status: 503 | 500;
  /** Only requests that reach this operation fail (default: any operation). */
  operation?: TestOperation;
}

const OPERATIONS: readonly TestOperation[] = ["listPets", "createPet", "getPet"];

/** The failure the kit injects, recognisable in `onError`. */
export class InjectedFault extends Error {
  constructor(status: number) {
    super(`failure injected by petstore-lib/testing (failNext, status ${status})`);
    this.name = "InjectedFault";
  }
}

/** The failures asked for and not yet spent, oldest first. */
export class Faults {
  private pending: { remaining: number; status: 503 | 500; operation: TestOperation | undefined }[] = [];

  /** Queues `n` failures (checked: a mistake in a test is a TypeError, not a silent no-op). */
  add(n: number, fail: FailOptions): void {
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
    this.pending.push({ remaining: n, status, operation });
  }

  /** The status of the failure this call of `operation` must meet, or undefined (it runs). */
  take(operation: TestOperation): 503 | 500 | undefined {
    const fault = this.pending.find((f) => f.operation === undefined || f.operation === operation);
    if (fault === undefined) return undefined;
    fault.remaining--;
    if (fault.remaining === 0) this.pending = this.pending.filter((f) => f !== fault);
    return fault.status;
  }

  clear(): void {
    this.pending = [];
  }
}

/**
 * The storage the store is given: the real one, with failures injected on demand. It is never
 * `inProcess` (the core then checks every value and caches nothing by id, so `reset()` can start
 * ids again at 1 under a running store).
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
