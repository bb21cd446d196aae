/**
 * Every storage call the core makes goes through a guard: the breaker (a backend known to be down
 * is not waited on), a time-out, any failure of the backend turned into `storage_unavailable`, and
 * (with `observe`) one observation per call. A synchronous answer stays synchronous: a page from
 * memory costs no promise.
 */
import type { Awaitable } from "../awaitable.ts";
import { isPromise } from "../awaitable.ts";
import { isPetStoreError, PetStoreError, storageUnavailable } from "../errors.ts";
import type { Observer, StorageOperation } from "../observe.ts";
import type { Admission, Breaker } from "./breaker.ts";

/** A storage call of one operation, guarded (and observed when the store has an observer). */
export type GuardedCall = <T>(operation: StorageOperation, call: () => Awaitable<T>) => Awaitable<T>;

export interface GuardOptions {
  /** How long a call may take before it is `storage_unavailable`. */
  timeoutMs: number;
  /** The storage's `kind`, for observations. */
  backend: string;
  /** In-process storage (memory) cannot hang: its calls run without a timer. */
  inProcess?: boolean | undefined;
  observe?: Observer | undefined;
  /** The store's breaker; none for in-process storage or when turned off. */
  breaker?: Breaker | undefined;
}

/** Tells the breaker how a call that reached the backend ended. */
function record(breaker: Breaker | undefined, admission: Admission, error?: unknown): void {
  if (breaker === undefined) return;
  if (error === undefined) breaker.succeeded(admission);
  else if (isPetStoreError(error))
    breaker.settled(admission); // the storage's own verdict, not an outage
  else breaker.failed(admission);
}

/** One call with the time-out: one timer and one promise beyond the storage's own (no race of promises). */
function withTimeout<T>(
  call: () => Awaitable<T>,
  { timeoutMs, inProcess = false, breaker }: GuardOptions,
  admission: Admission,
): Awaitable<T> {
  let result: Awaitable<T>;
  try {
    result = call();
  } catch (error) {
    record(breaker, admission, error);
    throw storageUnavailable(error);
  }
  if (!isPromise(result)) {
    record(breaker, admission);
    return result;
  }
  if (inProcess) {
    return result.then(undefined, (error: unknown) => {
      throw storageUnavailable(error);
    });
  }
  const pending = result;
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      breaker?.failed(admission);
      reject(new PetStoreError("storage_unavailable", "The storage backend did not answer in time."));
    }, timeoutMs);
    pending.then(
      (value) => {
        clearTimeout(timer);
        // An answer after the time-out still says the backend is back.
        record(breaker, timedOut ? "call" : admission);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!timedOut) record(breaker, admission, error);
        reject(storageUnavailable(error));
      },
    );
  });
}

/** The guard of one store's storage calls. @example guard("getPet", () => storage.get(7)) */
export function guardStorage(options: GuardOptions): GuardedCall {
  const { backend, observe, breaker } = options;
  if (observe === undefined) {
    if (breaker === undefined) return (_operation, call) => withTimeout(call, options, "call");
    return (_operation, call) => {
      const admission = breaker.admit();
      if (admission === "refused") throw breaker.refusal;
      return withTimeout(call, options, admission);
    };
  }
  const report = (operation: StorageOperation, started: number, failed: boolean) =>
    observe({ kind: "storage", operation, backend, durationMs: performance.now() - started, failed });
  return function observed<T>(operation: StorageOperation, call: () => Awaitable<T>): Awaitable<T> {
    const admission = breaker === undefined ? "call" : breaker.admit();
    if (admission === "refused") throw (breaker as Breaker).refusal; // no call was made: nothing to observe
    const started = performance.now();
    let result: Awaitable<T>;
    try {
      result = withTimeout(call, options, admission);
    } catch (error) {
      report(operation, started, true);
      throw error;
    }
    if (!isPromise(result)) {
      report(operation, started, false);
      return result;
    }
    return result.then(
      (value) => {
        report(operation, started, false);
        return value;
      },
      (error: unknown) => {
        report(operation, started, true);
        throw error;
      },
    );
  };
}
