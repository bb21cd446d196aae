/**
 * `importStore` and `importFile`: an export written into a store. The whole input is checked
 * first (every line, the counts, the digest), then the store (a pet of the same id must be the
 * same pet; pets not in the input need `merge`), and only then anything written: the sequence
 * first, so that no create takes an imported id, then the pets, then the key records. Pets and
 * records already there are skipped, so a second run finishes an import that was stopped.
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { Pet } from "../../lib/schemas.ts";
import type { GuardedTransfer } from "../../lib/storage/guarded-transfer.ts";
import type { KeyRecord, PetStorage } from "../../lib/storage/port.ts";
import { keyName, sameKeyRecord, samePet } from "../../lib/storage/transfer-checks.ts";
import { PET_PAGE, transferOf, walkPets } from "./export.ts";
import { type ExportHeader, type ExportRecord, ImportError } from "./format.ts";
import { InputCheck } from "./input-check.ts";

/** Key records written per call. */
const KEY_BATCH = 500;

export interface ImportOptions {
  /** Keep the pets the store holds that the input does not (without it, such a store is refused). */
  merge?: boolean;
  /** Told after each batch written: how many pets and keys are done, of how many. */
  onProgress?(done: number, total: number): void;
  /** Stops the import between two batches (it then rejects with the signal's reason); running it again finishes it. */
  signal?: AbortSignal;
}

/** What an import did. */
export interface ImportResult {
  /** Pets in the input; of them written now, and already there (the same pet). */
  pets: number;
  petsWritten: number;
  petsPresent: number;
  /** Key records in the input; of them written now, already there, and expired (not written). */
  keys: number;
  keysWritten: number;
  keysExpired: number;
  /** The store's next create takes this id or a higher one. */
  nextId: number;
}

/** An input that passed every check: its header, and its pets and keys to read (again) in batches. */
interface CheckedInput {
  header: ExportHeader;
  /** The highest pet id (0 without pets). */
  maxId: number;
  pets(): AsyncIterable<Pet[]>;
  keys(): AsyncIterable<KeyRecord[]>;
}

/** The lines of a file, without their line feeds. */
async function* readLines(path: string): AsyncGenerator<string> {
  const lines = createInterface({
    input: createReadStream(path, { encoding: "utf8" }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  for await (const line of lines) yield line;
}

/** Groups `items` in arrays of `size`. */
async function* batches<T>(items: AsyncIterable<T> | Iterable<T>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** Checks the export file at `path` whole; its pets and keys are read from the file again when written. */
async function checkFile(path: string, signal: AbortSignal | undefined): Promise<CheckedInput> {
  const check = new InputCheck((line) => `${path} line ${line}`);
  let lines = 0;
  for await (const line of readLines(path)) {
    if (++lines % 10_000 === 0) signal?.throwIfAborted();
    check.take(line);
  }
  const { header, maxId } = check.finish();
  async function* parts<K extends "pet" | "key">(kind: K) {
    let line = 0;
    for await (const text of readLines(path)) {
      if (++line === 1 || text === "") continue;
      const record = JSON.parse(text) as Record<K, K extends "pet" ? Pet : KeyRecord>;
      if (kind in record) yield record[kind];
    }
  }
  return {
    header,
    maxId,
    pets: () => batches(parts("pet"), PET_PAGE),
    keys: () => batches(parts("key"), KEY_BATCH),
  };
}

/** Checks the records whole, kept in memory to be written. */
async function checkRecords(records: Iterable<ExportRecord> | AsyncIterable<ExportRecord>): Promise<CheckedInput> {
  const check = new InputCheck((line) => `record ${line}`);
  const pets: Pet[] = [];
  const keys: KeyRecord[] = [];
  for await (const record of records) {
    const taken = check.take(JSON.stringify(record));
    if (taken === undefined) continue;
    if ("pet" in taken) pets.push(taken.pet);
    else keys.push(taken.key);
  }
  const { header, maxId } = check.finish();
  return { header, maxId, pets: () => batches(pets, PET_PAGE), keys: () => batches(keys, KEY_BATCH) };
}

/** The pets of `input` one by one, each with its line number (the header is line 1). */
async function* numbered(input: CheckedInput): AsyncGenerator<{ pet: Pet; line: number }> {
  let line = 1;
  for await (const batch of input.pets()) for (const pet of batch) yield { pet, line: ++line };
}

/**
 * Compares the store's pets and key records with the input's, before anything is written: the
 * count of pets already there. Throws an ImportError for a pet or key that differs, and for pets
 * the input does not hold unless `merge`.
 */
async function checkStore(
  store: GuardedTransfer,
  input: CheckedInput,
  { merge, signal }: ImportOptions,
): Promise<number> {
  const inputPets = numbered(input);
  let next = await inputPets.next();
  let present = 0;
  const extra: number[] = [];
  let extraCount = 0;
  for await (const page of walkPets(store)) {
    signal?.throwIfAborted();
    for (const pet of page) {
      while (!next.done && next.value.pet.id < pet.id) next = await inputPets.next();
      if (!next.done && next.value.pet.id === pet.id) {
        if (!samePet(pet, next.value.pet)) {
          throw new ImportError(
            `pet ${pet.id} in the store is not the pet of line ${next.value.line}: nothing written`,
          );
        }
        present++;
      } else {
        extraCount++;
        if (extra.length < 3) extra.push(pet.id);
      }
    }
  }
  if (extraCount > 0 && merge !== true) {
    throw new ImportError(
      `the store holds ${extraCount} pet${extraCount === 1 ? "" : "s"} not in the input (id ${extra.join(", ")}${extraCount > 3 ? ", …" : ""}): import into an empty store, or merge (--merge) to keep them; nothing written`,
    );
  }
  const now = Date.now();
  const stored = new Map<string, KeyRecord>();
  for await (const batch of store.transfer.keys(now)) for (const record of batch) stored.set(keyName(record), record);
  if (stored.size > 0) {
    for await (const batch of input.keys()) {
      for (const record of batch) {
        const found = stored.get(keyName(record));
        if (found !== undefined && !sameKeyRecord(found, record)) {
          throw new ImportError(
            `the store holds key ${JSON.stringify(record.key.slice(0, 64))} of another create: nothing written`,
          );
        }
      }
    }
  }
  return present;
}

/** Writes a checked input into `storage` (see the file's comment). */
async function writeInput(store: GuardedTransfer, input: CheckedInput, options: ImportOptions): Promise<ImportResult> {
  const { transfer } = store;
  const { header, maxId } = input;
  const present = await checkStore(store, input, options);
  const total = header.pets + header.keys;
  const nextId = Math.max(header.nextId, maxId + 1);
  await transfer.advanceIds(nextId);
  let done = 0;
  let petsWritten = 0;
  for await (const batch of input.pets()) {
    options.signal?.throwIfAborted();
    const result = await transfer.putPets(batch);
    if ("conflict" in result) {
      throw new ImportError(
        `pet ${result.conflict} was written in the store meanwhile, as another pet: stopped after ${petsWritten} pets`,
      );
    }
    petsWritten += result.written;
    done += batch.length;
    options.onProgress?.(done, total);
  }
  let keysWritten = 0;
  let keysExpired = 0;
  for await (const batch of input.keys()) {
    options.signal?.throwIfAborted();
    const now = Date.now();
    const live = batch.filter((record) => record.expiresAt > now);
    keysExpired += batch.length - live.length;
    const result = await transfer.putKeys(live, now);
    if ("conflict" in result) {
      throw new ImportError(
        `key ${JSON.stringify(result.conflict.key.slice(0, 64))} was written in the store meanwhile, for another create: stopped after ${keysWritten} keys`,
      );
    }
    keysWritten += result.written;
    done += batch.length;
    options.onProgress?.(done, total);
  }
  return {
    pets: header.pets,
    petsWritten,
    petsPresent: present,
    keys: header.keys,
    keysWritten,
    keysExpired,
    nextId: await transfer.nextId(),
  };
}

/**
 * Writes the records of an export (as `exportStore` yields them) into `storage`, after checking
 * them all and the store: rejects with an ImportError, nothing written, for records that are not a
 * whole export, a pet of the same id that differs, or (without `merge`) a store holding other
 * pets. Pets and key records already there are skipped: running it again finishes a stopped one.
 * @example await importStore(target, exportStore(source))
 */
export async function importStore(
  storage: PetStorage,
  records: Iterable<ExportRecord> | AsyncIterable<ExportRecord>,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const store = transferOf(storage);
  return writeInput(store, await checkRecords(records), options);
}

/** `importStore` from an export file, read twice (checked whole, then written) rather than held in memory. */
export async function importFile(
  storage: PetStorage,
  path: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const store = transferOf(storage);
  return writeInput(store, await checkFile(path, options.signal), options);
}
