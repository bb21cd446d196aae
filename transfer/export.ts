/**
 * `exportStore`: a store's data as the records of an export, read beside a serving store without
 * stopping it. The export holds the pets below the sequence as it stood at the start (every pet
 * acknowledged before then), counted in a first walk and written in a second, and the live key
 * records of those pets.
 */
import { createHash } from "node:crypto";
import type { Pet } from "../lib/schemas.ts";
import type { InvalidRecordError } from "../lib/storage/failures.ts";
import { type GuardedTransfer, guardTransfer } from "../lib/storage/guarded-transfer.ts";
import type { KeyRecord, PetStorage, StorageTransfer } from "../lib/storage/port.ts";
import { keyName } from "../lib/storage/transfer-checks.ts";
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportHeader, type ExportRecord, lineOf } from "./format.ts";
import { IdList } from "./id-list.ts";

/** Pets read per `list` call. */
export const PET_PAGE = 1000;

export interface ExportOptions {
  /** Told after each batch of lines: how many pets and keys are written, of how many. */
  onProgress?(done: number, total: number): void;
  /** Stops the export between two batches (its iteration then rejects with the signal's reason). */
  signal?: AbortSignal;
  /**
   * Leaves out each pet whose record cannot be decoded, telling it here (`petstore export
   * --skip-invalid`); without it, the export fails at the first, naming its key. Its key records
   * are left out with it.
   */
  onInvalid?(error: InvalidRecordError): void;
}

/**
 * The storage's pages and transfer calls, each through a guard (lib/storage/guarded-transfer.ts),
 * or a clear error for a storage that has none.
 */
export function transferOf(storage: PetStorage): GuardedTransfer {
  return guardTransfer(storage);
}

/**
 * Every pet with an id below `below`, ascending, a page at a time; a record that cannot be decoded
 * fails the walk naming its key, or with `onInvalid` is left out and told.
 */
export async function* walkPets(
  store: GuardedTransfer,
  below = Number.POSITIVE_INFINITY,
  onInvalid?: (error: InvalidRecordError) => void,
): AsyncGenerator<Pet[]> {
  let after = 0;
  for (;;) {
    const page = await store.list({ after, limit: PET_PAGE, onInvalid });
    const kept = page.filter((pet) => pet.id < below);
    if (kept.length > 0) yield kept;
    const last = page[page.length - 1];
    if (page.length < PET_PAGE || last === undefined || last.id >= below) return;
    after = last.id;
  }
}

/** Every unexpired key record of the storage whose pet is among `ids`, by scope then key. */
async function liveKeys(transfer: StorageTransfer, now: number, ids: IdList): Promise<KeyRecord[]> {
  const records: KeyRecord[] = [];
  const seen = new Set<string>();
  for await (const batch of transfer.keys(now)) {
    for (const record of batch) {
      const name = keyName(record);
      if (seen.has(name) || !ids.has(record.petId)) continue;
      seen.add(name);
      records.push(record);
    }
  }
  return records.sort((a, b) => (a.scope === b.scope ? compare(a.key, b.key) : compare(a.scope, b.scope)));
}
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The lines of an export of `storage`, each with its record; the end line's digest covers the lines before it. */
export async function* exportLines(
  storage: PetStorage,
  options: ExportOptions = {},
): AsyncGenerator<[ExportRecord, string]> {
  const guarded = transferOf(storage);
  const { transfer } = guarded;
  const { onProgress, signal } = options;
  // Told once per bad record: the second walk meets the first's again.
  const told = new Set<string>();
  const onInvalid =
    options.onInvalid === undefined
      ? undefined
      : (error: InvalidRecordError) => {
          if (told.has(error.key)) return;
          told.add(error.key);
          options.onInvalid?.(error);
        };
  const startedAt = new Date();
  const nextId = await transfer.nextId();
  // The first walk decides what the export holds: the pets there now below the sequence's start.
  const ids = new IdList();
  for await (const page of walkPets(guarded, nextId, onInvalid)) {
    signal?.throwIfAborted();
    for (const pet of page) ids.push(pet.id);
  }
  const count = ids.size;
  const keys = await liveKeys(transfer, startedAt.getTime(), ids);
  const header: ExportHeader = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: startedAt.toISOString(),
    nextId,
    pets: count,
    keys: keys.length,
  };
  const total = count + keys.length;
  const digest = createHash("sha256");
  const emit = (record: ExportRecord): [ExportRecord, string] => {
    const line = lineOf(record);
    digest.update(line);
    return [record, line];
  };
  yield emit(header);
  // The second walk writes them: pets are never changed or removed, so each is found again.
  let written = 0;
  for await (const page of walkPets(guarded, nextId, onInvalid)) {
    signal?.throwIfAborted();
    for (const pet of page) {
      if (!ids.has(pet.id)) continue; // created after the start
      if (ids.at(written) !== pet.id)
        throw new Error(`the store changed during the export: pet ${ids.at(written)} is gone`);
      written++;
      yield emit({ pet });
    }
    onProgress?.(written, total);
  }
  if (written !== count) throw new Error(`the store changed during the export: ${count - written} pets are gone`);
  for (const [i, key] of keys.entries()) {
    yield emit({ key });
    if (i % PET_PAGE === PET_PAGE - 1) onProgress?.(count + i + 1, total);
  }
  onProgress?.(total, total);
  const end = { end: true as const, sha256: digest.digest("hex") };
  yield [end, lineOf(end)];
}

/**
 * The records of an export of `storage` (pets, and the key records of idempotent creates), read
 * beside a serving store without stopping it: a header, each pet acknowledged before the export
 * started in ascending id, each live key record, and the end with the digest of the lines before
 * it. Rejects for a storage without transfer calls.
 * @example for await (const record of exportStore(storage)) out.write(JSON.stringify(record) + "\n")
 */
export async function* exportStore(storage: PetStorage, options: ExportOptions = {}): AsyncGenerator<ExportRecord> {
  for await (const [record] of exportLines(storage, options)) yield record;
}
