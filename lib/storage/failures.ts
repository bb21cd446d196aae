/**
 * The one failure policy of storage (shared/architecture.md, "One failure policy"). A backend says
 * what went wrong where it knows: it throws `InvalidRecordError`, naming the key, where it decodes a
 * record or where its driver blames a value by an error code. The guard then decides once: an
 * invalid record is that request's `500 internal_error` (never counted by the breaker); anything
 * else a storage call throws is the backend failing, `503 storage_unavailable`, counted. Nothing
 * here reads a driver's message text. docs/STORAGE.md, "When storage fails".
 */
import { isPetStoreError, PetStoreError } from "../errors.ts";

/**
 * A stored record that is not what a store writes: a pet that is not a valid Pet, an id sequence
 * that is not an integer, an idempotency record that cannot be read, a value of another type. It
 * carries where it is and what is wrong, never the value itself.
 */
export class InvalidRecordError extends Error {
  constructor(
    /** The storage's kind: "memory", "sqlite", "redis", "postgres". */
    readonly backend: string,
    /** The record's key as the backend names it (a Redis key, Keyv's `pets:<id>` in a SQL table). */
    readonly key: string,
    /** What is wrong with it, in words: never the stored value. */
    readonly reason: string,
  ) {
    super(`${backend} storage: the record ${key} is invalid: ${reason}`);
    this.name = "InvalidRecordError";
  }
}

/**
 * Something a storage wants its operator to know that no answer shows and that it repaired by
 * itself (an id sequence found behind the stored pets): handed to the store's `onError`, which the
 * standalone server logs as a warning.
 */
export class StorageWarning extends Error {
  constructor(
    /** The storage's kind. */
    readonly backend: string,
    message: string,
  ) {
    super(`${backend} storage: ${message}`);
    this.name = "StorageWarning";
  }
}

/** The invalid record behind an error, when there is one. */
export function invalidRecordOf(error: unknown): InvalidRecordError | undefined {
  const cause = isPetStoreError(error) ? error.cause : error;
  return cause instanceof InvalidRecordError ? cause : undefined;
}

/**
 * The contract's error for what a storage call threw: a PetStoreError as it is, an invalid record
 * as that request's `internal_error`, anything else (a driver's error, a custom storage's
 * `TypeError: fetch failed`, a bug in a backend) as `storage_unavailable`.
 * @example throw storageFailure(error)
 */
export function storageFailure(error: unknown): PetStoreError {
  if (isPetStoreError(error)) return error;
  const code = error instanceof InvalidRecordError ? "internal_error" : "storage_unavailable";
  return new PetStoreError(code, undefined, { cause: error });
}

/**
 * `error` as an invalid record naming `key` when `blamesValue` (the backend's reading of its
 * driver's error code) says the backend refused a value; otherwise `error` as it is.
 * @example throw blamed(error, "redis", key, redisBlamesValue)
 */
export function blamed(
  error: unknown,
  backend: string,
  key: string,
  blamesValue: (error: unknown) => string | undefined,
): unknown {
  const reason = blamesValue(error);
  return reason === undefined ? error : new InvalidRecordError(backend, key, reason);
}

/** At most this many failures are remembered; past it the memory starts again (a flood is still bounded). */
const REMEMBERED = 1024;
const REPORT_EVERY_MS = 60_000;

/** What a report is remembered by: an invalid record by its backend and key, an outage by its error. */
function reportKeyOf(error: unknown): string | undefined {
  const record = invalidRecordOf(error);
  if (record !== undefined) return `record ${record.backend} ${record.key}`;
  if (!isPetStoreError(error, "storage_unavailable")) return undefined;
  const cause = error.cause;
  const text = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  return `outage ${text.slice(0, 200)}`;
}

/**
 * `onError` with storage failures reported at most once a minute each: an invalid record per
 * backend and key, an outage per distinct error (a dead backend fails every call alike). The
 * core's own errors pass every time. Per store.
 */
export function reportFailuresOnce(onError: (error: unknown) => void): (error: unknown) => void {
  const lastReported = new Map<string, number>();
  return (error) => {
    const id = reportKeyOf(error);
    if (id !== undefined) {
      const now = performance.now();
      const last = lastReported.get(id);
      if (last !== undefined && now - last < REPORT_EVERY_MS) return;
      if (lastReported.size >= REMEMBERED) lastReported.clear();
      lastReported.set(id, now);
    }
    onError(error);
  };
}
