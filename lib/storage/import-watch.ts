/**
 * A store's watch over an unfinished import (contract 1.4, "Storage faults and moving data"): while
 * an import's mark is on the storage, creates are refused (`503 storage_unavailable`) and readiness
 * says why, reads are served. The mark is read at most once per `MARK_READ_EVERY_MS`, so a create
 * waits on that read only then; an import waits `MARK_SEEN_MS` after marking before its first
 * write, by when every store on the backend has read the mark again (unless its backend is slower
 * than that to answer: a store found unmarked answers so while it reads the mark again). A mark
 * found is never trusted once due, and readiness always waits on the read that is due: a finished
 * import shows at the next probe and create.
 */
import type { Awaitable } from "../awaitable.ts";
import { isPromise } from "../awaitable.ts";
import { PetStoreError } from "../errors.ts";
import type { GuardedCall } from "./guard.ts";
import type { ImportMark, PetStorage } from "./port.ts";

/** How long a read of the mark is trusted. */
export const MARK_READ_EVERY_MS = 500;

/** How long an import waits after marking the store, before its first write. */
export const MARK_SEEN_MS = MARK_READ_EVERY_MS + 100;

/** What readiness says while an import is unfinished. */
export const UNFINISHED_IMPORT = "an import is unfinished: run it again or petstore import --abandon";

export interface ImportWatch {
  /**
   * The mark of an unfinished import (read lately, or now), or undefined. A mark read longer ago
   * than `MARK_READ_EVERY_MS` is read again: a mark found last time waits on that read (so the
   * first create after an import finished is not refused on a stale read), a store found unmarked
   * answers so while it reads (a backend that hangs holds no create on that read).
   */
  current(): Awaitable<ImportMark | undefined>;
  /** The mark as the storage says it now: waits on a read whenever the last is due again (readiness). */
  latest(): Awaitable<ImportMark | undefined>;
  /** Throws the create's refusal while an import is unfinished (waits on a read of the mark only when due). */
  refuseCreates(): Awaitable<void>;
}

/** The refusal of a create while an import is unfinished: 503, as an outage, but no outage (the breaker does not count it). */
export function unfinishedImport(mark: ImportMark): PetStoreError {
  return new PetStoreError(
    "storage_unavailable",
    "An import into this store is unfinished: creates resume once it is done. Try again shortly.",
    { cause: new Error(`petstore: an import started at ${mark.startedAt} is unfinished`) },
  );
}

/** The watch of `storage`'s mark through the store's guard; none for a storage that keeps no mark. */
export function watchImports(storage: PetStorage, guard: GuardedCall): ImportWatch | undefined {
  const transfer = storage.transfer;
  const read = transfer?.importMark;
  if (transfer === undefined || read === undefined) return undefined;
  let mark: ImportMark | undefined;
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<ImportMark | undefined> | undefined;
  /** The mark read lately, else the read of it (started now, or under way). */
  const latest = (): Awaitable<ImportMark | undefined> => {
    if (performance.now() - readAt < MARK_READ_EVERY_MS) return mark;
    if (reading === undefined) {
      const started = performance.now();
      reading = Promise.resolve(guard("transfer", () => read.call(transfer))).then(
        (found) => {
          mark = found;
          readAt = started;
          reading = undefined;
          return found;
        },
        (error: unknown) => {
          reading = undefined;
          throw error;
        },
      );
      reading.catch(() => {}); // a read no create waits on fails unheard: the next one asks again
    }
    return reading;
  };
  const current = (): Awaitable<ImportMark | undefined> => {
    const found = latest();
    // Only the first read, and the read after a mark was found, are waited on: otherwise "no mark"
    // answers while the next read is under way, so a backend that hangs holds no create on this
    // read (the create's own call decides). A mark found last time is never trusted stale: the
    // import may have finished since, and its creates would be refused for nothing.
    if (!isPromise(found) || readAt === Number.NEGATIVE_INFINITY || mark !== undefined) return found;
    return mark;
  };
  const refuse = (found: ImportMark | undefined) => {
    if (found !== undefined) throw unfinishedImport(found);
  };
  return {
    current,
    latest,
    refuseCreates() {
      const found = current();
      return isPromise(found) ? found.then(refuse) : refuse(found);
    },
  };
}
