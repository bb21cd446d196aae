/**
 * Moving data (export, import, verify) calls the storage outside any request: through a guard of
 * its own all the same, so that a hung backend ends in a time-out, a bad record is an
 * `InvalidRecordError` naming its key and anything else `storage_unavailable` with its cause, as
 * for every other storage call (lib/storage/failures.ts).
 */
import type { GuardedCall } from "./guard.ts";
import { guardStorage } from "./guard.ts";
import type { ListPage, PetStorage, StorageTransfer } from "./port.ts";

/** How long one call of a transfer may take (a batch of 1,000 pets written in one transaction). */
export const TRANSFER_TIMEOUT_MS = 30_000;

/** What moving data reads and writes, each call guarded. */
export interface GuardedTransfer {
  list(page: ListPage): Promise<import("../schemas.ts").Pet[]>;
  transfer: StorageTransfer;
}

/** `iterable`, each step guarded as a call of its own. */
async function* guardSteps<T>(guard: GuardedCall, iterable: AsyncIterable<T>): AsyncGenerator<T> {
  const steps = iterable[Symbol.asyncIterator]();
  for (;;) {
    const step = await guard("transfer", () => steps.next());
    if (step.done) return;
    yield step.value;
  }
}

/**
 * The pages and transfer calls of `storage` through a guard (time-out, failures classified).
 * Throws for a storage without transfer calls.
 * @example const { list, transfer } = guardTransfer(storage); await transfer.nextId()
 */
export function guardTransfer(storage: PetStorage, timeoutMs = TRANSFER_TIMEOUT_MS): GuardedTransfer {
  const transfer = storage?.transfer;
  if (transfer === undefined) {
    throw new Error(
      `${storage?.kind ?? "this"} storage cannot export or import (it has no transfer calls: docs/STORAGE.md, "Moving data")`,
    );
  }
  const guard = guardStorage({ timeoutMs, backend: storage.kind });
  const call = async <T>(run: () => Promise<T>): Promise<T> => guard("transfer", run);
  const { importMark, setImportMark, undoImport } = transfer;
  const guarded: StorageTransfer = {
    nextId: () => call(() => transfer.nextId()),
    keys: (now) => guardSteps(guard, transfer.keys(now)),
    putPets: (pets) => call(() => transfer.putPets(pets)),
    advanceIds: (next) => call(() => transfer.advanceIds(next)),
    putKeys: (records, now) => call(() => transfer.putKeys(records, now)),
  };
  // An unfinished import's mark, where the storage keeps one.
  if (importMark !== undefined && setImportMark !== undefined && undoImport !== undefined) {
    guarded.importMark = () => call(() => importMark.call(transfer));
    guarded.setImportMark = (mark) => call(() => setImportMark.call(transfer, mark));
    guarded.undoImport = (mark) => call(() => undoImport.call(transfer, mark));
  }
  return { list: (page) => call(async () => storage.list(page)), transfer: guarded };
}
