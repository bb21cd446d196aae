/**
 * Every storage call the core makes goes through a guard (pages, pets, creates, readiness, rate
 * limit leases, transfers): the breaker (a backend known to be down is not waited on), a time-out,
 * each failure classified once (./failures.ts: an invalid record is that request's
 * `internal_error` and does not count; anything else is `storage_unavailable`, counts, and is
 * reported), and (with `observe`) one observation per call. A synchronous answer stays
 * synchronous: a page from memory costs no promise.
 */
import type { Awaitable } from "../awaitable.ts";
import { isPromise } from "../awaitable.ts";
import { PetStoreError } from "../errors.ts";
import type { Observer, StorageOperation } from "../observe.ts";
import type { Admission, Breaker } from "./breaker.ts";
import { storageFailure } from "./failures.ts";
import type { ReadClock } from "./read-clock.ts";

/** A storage call of one operation, guarded (and observed when the store has an observer). */
export type GuardedCall = <T>(operation: StorageOperation, call: () => Awaitable<T>) => Awaitable<T>;

export interface GuardOptions {
  /** How long a call may take before it is `storage_unavailable`; undefined for storage that cannot hang (no timer). */
  timeoutMs: number | undefined;
  /** The storage's `kind`, for observations. */
  backend: string;
  observe?: Observer | undefined;
  /** The store's breaker; none for storage that cannot hang or when turned off. */
  breaker?: Breaker | undefined;
  /** When a read last succeeded, for readiness; none for storage that cannot hang. */
  reads?: ReadClock | undefined;
  /** Told each call that failed as an outage (`storage_unavailable`, its error as cause); a refusal of the open breaker is no call. */
  report?: ((failure: PetStoreError) => void) | undefined;
}

/**
 * Tells the breaker and the read clock how a call that reached the backend ended: only an outage
 * counts against the breaker.
 */
function record(
  options: GuardOptions,
  operation: StorageOperation,
  admission: Admission,
  failure?: PetStoreError,
): void {
  const { breaker, reads } = options;
  reads?.settled(operation, failure);
  if (failure !== undefined && failure.code === "storage_unavailable") options.report?.(failure);
  if (breaker === undefined) return;
  if (failure === undefined) breaker.succeeded(admission);
  else if (failure.code === "storage_unavailable") breaker.failed(admission, failure);
  else breaker.settled(admission); // the storage's own verdict (an invalid record), not an outage
}

/** One call with the time-out: one timer and one promise beyond the storage's own (no race of promises). */
function withTimeout<T>(
  operation: StorageOperation,
  call: () => Awaitable<T>,
  options: GuardOptions,
  admission: Admission,
): Awaitable<T> {
  const { timeoutMs, breaker, backend } = options;
  let result: Awaitable<T>;
  try {
    result = call();
  } catch (error) {
    const failure = storageFailure(error);
    record(options, operation, admission, failure);
    throw failure;
  }
  if (!isPromise(result)) {
    record(options, operation, admission);
    return result;
  }
  if (timeoutMs === undefined) {
    return result.then(undefined, (error: unknown) => {
      const failure = storageFailure(error);
      record(options, operation, admission, failure);
      throw failure;
    });
  }
  const pending = result;
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      const failure = new PetStoreError("storage_unavailable", "The storage backend did not answer in time.", {
        cause: new Error(`${backend} storage: no answer within ${timeoutMs} ms`),
      });
      record(options, operation, admission, failure);
      reject(failure);
    }, timeoutMs);
    pending.then(
      (value) => {
        clearTimeout(timer);
        // An answer after the time-out still tells the breaker the backend is back.
        if (timedOut) breaker?.succeeded("call");
        else record(options, operation, admission);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        const failure = storageFailure(error);
        if (!timedOut) record(options, operation, admission, failure);
        reject(failure);
      },
    );
  });
}

/** The guard of one store's storage calls. @example guard("getPet", () => storage.get(7)) */
export function guardStorage(options: GuardOptions): GuardedCall {
  const { backend, observe, breaker } = options;
  if (observe === undefined) {
    if (breaker === undefined) return (operation, call) => withTimeout(operation, call, options, "call");
    return (operation, call) => {
      const admission = breaker.admit();
      if (admission === "refused") throw breaker.refusal;
      return withTimeout(operation, call, options, admission);
    };
  }
  const report = (operation: StorageOperation, started: number, outcome: "done" | "failed") =>
    observe({
      kind: "storage",
      operation,
      backend,
      durationMs: performance.now() - started,
      failed: outcome === "failed",
    });
  return function observed<T>(operation: StorageOperation, call: () => Awaitable<T>): Awaitable<T> {
    const admission = breaker === undefined ? "call" : breaker.admit();
    if (admission === "refused") throw (breaker as Breaker).refusal; // no call was made: nothing to observe
    const started = performance.now();
    let result: Awaitable<T>;
    try {
      result = withTimeout(operation, call, options, admission);
    } catch (error) {
      report(operation, started, "failed");
      throw error;
    }
    if (!isPromise(result)) {
      report(operation, started, "done");
      return result;
    }
    return result.then(
      (value) => {
        report(operation, started, "done");
        return value;
      },
      (error: unknown) => {
        report(operation, started, "failed");
        throw error;
      },
    );
  };
}
