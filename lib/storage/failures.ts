/**
 * What a failed storage call means, decided in this one place: either the backend could not be
 * reached or used (an outage: `503 storage_unavailable`, counted by the breaker), or a record it
 * holds is not what a store writes (that request's `500 internal_error`, reported with the backend,
 * the key and the reason, never the value, and never counted: one bad record must not look like
 * a dead backend). docs/STORAGE.md, "When storage fails", lists both.
 */
import { isPetStoreError, PetStoreError } from "../errors.ts";

/**
 * A stored record that is not what a store writes: a pet that is not a valid Pet, an id sequence
 * that is not an integer, an idempotency record that cannot be read. It carries where it is and
 * what is wrong, never the value itself.
 */
export class InvalidRecordError extends Error {
  constructor(
    /** The storage's kind: "memory", "sqlite", "redis", "postgres". */
    readonly backend: string,
    /** The record's key as the backend names it (Keyv's `pets:<id>`, a Redis key, a table's row). */
    readonly key: string,
    /** What is wrong with it, in words: never the stored value. */
    readonly reason: string,
  ) {
    super(`${backend} storage: the record ${key} is invalid: ${reason}`);
    this.name = "InvalidRecordError";
  }
}

/** The `500 internal_error` of a request that met an invalid record (the record in its `cause`). */
export function invalidRecord(backend: string, key: string, reason: string): PetStoreError {
  return new PetStoreError("internal_error", undefined, { cause: new InvalidRecordError(backend, key, reason) });
}

/** The invalid record behind an error, when there is one. */
export function invalidRecordOf(error: unknown): InvalidRecordError | undefined {
  const cause = isPetStoreError(error) ? error.cause : error;
  return cause instanceof InvalidRecordError ? cause : undefined;
}

/** SQLSTATE classes of Postgres that blame the data, not the server: 22 data exception, 23 integrity constraint. */
const POSTGRES_DATA_CLASSES = new Set(["22", "23"]);
/** SQLite result codes that blame the data: a value of the wrong type or size, a broken constraint. */
const SQLITE_DATA_CODES = new Set(["SQLITE_MISMATCH", "SQLITE_TOOBIG", "SQLITE_CONSTRAINT", "SQLITE_RANGE"]);
/** Redis replies that blame a key's value: another type, a number that is not one, a script that met either. */
const REDIS_DATA_REPLY =
  /^(WRONGTYPE|ERR value is not an (integer|valid float)|ERR hash value is not|ERR user_script:|ERR Error running script)/;

/**
 * True when `error` says a stored record is bad rather than that the backend failed: the errors
 * JavaScript itself throws on a value it cannot take (a JSON text that does not parse, a field of
 * the wrong type), and the backends' replies that name a value's type or form. Anything else (a
 * refused or lost connection, a time-out, a backend loading, read-only, out of memory or disk, a
 * SQLite I/O error or lock, a table that is gone) is an outage.
 */
export function isInvalidData(error: unknown): boolean {
  if (error instanceof InvalidRecordError) return true;
  if (error instanceof SyntaxError || error instanceof TypeError || error instanceof RangeError) return true;
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : "";
  if (typeof code === "string") {
    if (SQLITE_DATA_CODES.has(code)) return true;
    if (code === "SQLITE_ERROR") return /JSON|malformed|datatype mismatch/i.test(text);
    if (/^[0-9A-Z]{5}$/.test(code) && POSTGRES_DATA_CLASSES.has(code.slice(0, 2))) return true;
  }
  return REDIS_DATA_REPLY.test(text);
}

/** The reason of a driver's error, for the log: its first line, cut short (a driver may quote a value after it). */
export function reasonOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split("\n", 1)[0] ?? "";
  // JSON.parse quotes the text it could not read: keep only what it says is wrong.
  const unquoted = error instanceof SyntaxError ? "not valid JSON" : line;
  return unquoted.length > 160 ? `${unquoted.slice(0, 160)}…` : unquoted;
}

/**
 * The contract's error for a failed storage call: a PetStoreError as it is, an invalid record as
 * that request's `internal_error` (with `key` when the caller knows it), anything else as
 * `storage_unavailable`. @example throw storageFailure(error, "redis", "petstore::7")
 */
export function storageFailure(error: unknown, backend: string, key = "unknown"): PetStoreError {
  if (isPetStoreError(error)) return error;
  if (!isInvalidData(error)) return new PetStoreError("storage_unavailable", undefined, { cause: error });
  const record = error instanceof InvalidRecordError ? error : new InvalidRecordError(backend, key, reasonOf(error));
  return new PetStoreError("internal_error", undefined, { cause: record });
}

/** Rejects with an invalid record naming `key` when `promise` fails on bad data; an outage passes as it is. */
export function blameRecord<T>(promise: Promise<T>, backend: string, key: string): Promise<T> {
  return promise.catch((error: unknown) => {
    throw isInvalidData(error) ? storageFailure(error, backend, key) : error;
  });
}

/** At most this many keys are remembered; past it the memory starts again (a flood of bad keys is still bounded). */
const REMEMBERED_KEYS = 1024;
const REPORT_EVERY_MS = 60_000;

/**
 * `onError` with invalid records reported at most once per backend and key per minute: a client
 * that reads one bad record in a loop fills no log. Everything else passes as it is. Per store.
 */
export function reportRecordsOnce(onError: (error: unknown) => void): (error: unknown) => void {
  const lastReported = new Map<string, number>();
  return (error) => {
    const record = invalidRecordOf(error);
    if (record !== undefined) {
      const id = `${record.backend} ${record.key}`;
      const now = performance.now();
      const last = lastReported.get(id);
      if (last !== undefined && now - last < REPORT_EVERY_MS) return;
      if (lastReported.size >= REMEMBERED_KEYS) lastReported.clear();
      lastReported.set(id, now);
    }
    onError(error);
  };
}
