/**
 * Every storage call the core makes goes through a guard: a time-out, any failure of the backend
 * turned into `storage_unavailable`, and (with `observe`) one observation per call with its
 * duration and outcome. A synchronous answer stays synchronous: a page from memory costs no promise.
 */
import type { Awaitable } from "../awaitable.ts";
import { isPromise } from "../awaitable.ts";
import { PetStoreError, storageUnavailable } from "../errors.ts";
import type { Observer, StorageOperation } from "../observe.ts";

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
}

/** One call with the time-out: one timer and one promise beyond the storage's own (no race of promises). */
function withTimeout<T>(call: () => Awaitable<T>, timeoutMs: number, inProcess: boolean): Awaitable<T> {
  let result: Awaitable<T>;
  try {
    result = call();
  } catch (error) {
    throw storageUnavailable(error);
  }
  if (!isPromise(result)) return result;
  if (inProcess) {
    return result.then(undefined, (error: unknown) => {
      throw storageUnavailable(error);
    });
  }
  const pending = result;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new PetStoreError("storage_unavailable", "The storage backend did not answer in time.")),
      timeoutMs,
    );
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(storageUnavailable(error));
      },
    );
  });
}

/** The guard of one store's storage calls. @example guard("getPet", () => storage.get(7)) */
export function guardStorage({ timeoutMs, backend, inProcess = false, observe }: GuardOptions): GuardedCall {
  if (observe === undefined) return (_operation, call) => withTimeout(call, timeoutMs, inProcess);
  const report = (operation: StorageOperation, started: number, failed: boolean) =>
    observe({ kind: "storage", operation, backend, durationMs: performance.now() - started, failed });
  return function observed<T>(operation: StorageOperation, call: () => Awaitable<T>): Awaitable<T> {
    const started = performance.now();
    let result: Awaitable<T>;
    try {
      result = withTimeout(call, timeoutMs, inProcess);
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
