/**
 * `importStore`, `importFile` and `abandonImport`: an export written into a store. The whole input
 * is checked first (every line, the counts, the digest), then the store (a pet of the same id must
 * be the same pet; pets not in the input need `merge`), and only then anything written: the store
 * marked as holding an unfinished import (creates refused, readiness 503), the sequence moved so
 * that no create takes an imported id, the key records, the pets, then the mark cleared. Pets and
 * records already there are skipped, so the same import run again finishes one that was stopped;
 * `abandonImport` undoes one by its mark.
 */

import { printable } from "../lib/printable.ts";
import type { Pet } from "../lib/schemas.ts";
import type { GuardedTransfer } from "../lib/storage/guarded-transfer.ts";
import { MARK_SEEN_MS } from "../lib/storage/import-watch.ts";
import type { ImportMark, KeyRecord, PetStorage } from "../lib/storage/port.ts";
import { keyName, sameKeyRecord, samePet } from "../lib/storage/transfer-checks.ts";
import { PET_PAGE, transferOf, walkPets } from "./export.ts";
import { type ExportHeader, type ExportRecord, ImportError } from "./format.ts";
import { digestOf, readSource } from "./input.ts";
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
  /** Told once the store is marked (or found marked by this same import): from then on, an import stopped is unfinished. */
  onMarked?(mark: ImportMark): void;
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

/** An input that passed every check: its header, its digest, and its pets and keys to read (again) in batches. */
interface CheckedInput {
  header: ExportHeader;
  /** The highest pet id (0 without pets). */
  maxId: number;
  /** SHA-256 of the input as it was checked: an import's mark names its input by it. */
  digest: string;
  pets(): AsyncIterable<Pet[]>;
  keys(): AsyncIterable<KeyRecord[]>;
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

/**
 * Checks the export at `path` whole (`-`: standard input), read once (input.ts); each write pass
 * reads it again and checks every line again, so what is written is what was checked.
 */
async function checkFile(path: string, signal: AbortSignal | undefined): Promise<CheckedInput & Closable> {
  const where = (line: number) => `${path === "-" ? "standard input" : printable(path)} line ${line}`;
  const check = new InputCheck(where);
  const source = await readSource(path, (line) => check.take(line.text), signal);
  const { header, maxId } = check.finish();
  async function* parts<K extends "pet" | "key">(kind: K) {
    const again = new InputCheck(where);
    for await (const line of source.lines(signal)) {
      const record = again.take(line.text) as Record<K, K extends "pet" ? Pet : KeyRecord> | undefined;
      if (record !== undefined && kind in record) yield record[kind];
    }
    again.finish();
  }
  return {
    header,
    maxId,
    digest: source.digest,
    pets: () => batches(parts("pet"), PET_PAGE),
    keys: () => batches(parts("key"), KEY_BATCH),
    close: () => source.close(),
  };
}

interface Closable {
  close(): Promise<void>;
}

/** Checks the records whole, kept in memory to be written. */
async function checkRecords(records: Iterable<ExportRecord> | AsyncIterable<ExportRecord>): Promise<CheckedInput> {
  const check = new InputCheck((line) => `record ${line}`);
  const pets: Pet[] = [];
  const keys: KeyRecord[] = [];
  const lines: string[] = [];
  for await (const record of records) {
    const line = JSON.stringify(record);
    lines.push(`${line}\n`);
    const taken = check.take(line);
    if (taken === undefined) continue;
    if ("pet" in taken) pets.push(taken.pet);
    else keys.push(taken.key);
  }
  const { header, maxId } = check.finish();
  return {
    header,
    maxId,
    digest: digestOf(lines),
    pets: () => batches(pets, PET_PAGE),
    keys: () => batches(keys, KEY_BATCH),
  };
}

/** The pets of `input` one by one, each with its line number (the header is line 1). */
async function* numbered(input: CheckedInput): AsyncGenerator<{ pet: Pet; line: number }> {
  let line = 1;
  for await (const batch of input.pets()) for (const pet of batch) yield { pet, line: ++line };
}

/** Ids as ascending `[first, last]` runs, a run broken wherever a pet the import does not write lies. */
class Ranges {
  readonly runs: [number, number][] = [];
  private open = false;
  /** `id` is written by the import: it joins the open run, or starts one. */
  add(id: number): void {
    const last = this.runs[this.runs.length - 1];
    if (this.open && last !== undefined) last[1] = id;
    else this.runs.push([id, id]);
    this.open = true;
  }
  /** A pet the import does not write lies here: the next id starts a new run. */
  break(): void {
    this.open = false;
  }
}

/**
 * Compares the store's pets and key records with the input's, before anything is written: how
 * many are already there, and the ids the import writes (as runs no other pet lies within, which
 * an undo may remove whole). Throws an ImportError for a pet or key that differs, and for pets the
 * input does not hold unless `merge`.
 */
async function checkStore(
  store: GuardedTransfer,
  input: CheckedInput,
  { merge, signal }: ImportOptions,
): Promise<{ present: number; writes: [number, number][] }> {
  const inputPets = numbered(input);
  let next = await inputPets.next();
  let present = 0;
  const writes = new Ranges();
  const extra: number[] = [];
  let extraCount = 0;
  for await (const page of walkPets(store)) {
    signal?.throwIfAborted();
    for (const pet of page) {
      while (!next.done && next.value.pet.id < pet.id) {
        writes.add(next.value.pet.id);
        next = await inputPets.next();
      }
      writes.break();
      if (!next.done && next.value.pet.id === pet.id) {
        if (!samePet(pet, next.value.pet)) {
          throw new ImportError(
            `pet ${pet.id} in the store is not the pet of line ${next.value.line}: nothing written`,
          );
        }
        present++;
        next = await inputPets.next();
      } else {
        extraCount++;
        if (extra.length < 3) extra.push(pet.id);
      }
    }
  }
  for (; !next.done; next = await inputPets.next()) writes.add(next.value.pet.id);
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
            `the store holds key ${printable(JSON.stringify(record.key.slice(0, 64)))} of another create: nothing written`,
          );
        }
      }
    }
  }
  return { present, writes: writes.runs };
}

/** Resolves after `ms`, or rejects when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", done);
      resolve();
    }, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** The message of an import refused because the store holds another unfinished one. */
const anotherImport = (mark: ImportMark) =>
  `the store holds an unfinished import of another input (started ${mark.startedAt}): run that import again to finish it, or undo it with petstore import --abandon; nothing written`;

/** Moves the sequence, then writes the key records and the pets of `input`, counting in `counts`. */
async function writeRecords(
  transfer: GuardedTransfer["transfer"],
  input: CheckedInput,
  options: ImportOptions,
  total: number,
  counts: { keysWritten: number; keysExpired: number; petsWritten: number },
): Promise<void> {
  const { header, maxId } = input;
  await transfer.advanceIds(Math.max(header.nextId, maxId + 1));
  let done = 0;
  // Keys first: a retried create of an imported key then replays its pet as soon as it is written.
  for await (const batch of input.keys()) {
    options.signal?.throwIfAborted();
    const now = Date.now();
    const live = batch.filter((record) => record.expiresAt > now);
    counts.keysExpired += batch.length - live.length;
    const result = await transfer.putKeys(live, now);
    if ("conflict" in result) {
      throw new ImportError(
        `key ${printable(JSON.stringify(result.conflict.key.slice(0, 64)))} was written in the store meanwhile, for another create: stopped after ${counts.keysWritten} keys`,
      );
    }
    counts.keysWritten += result.written;
    done += batch.length;
    options.onProgress?.(done, total);
  }
  for await (const batch of input.pets()) {
    options.signal?.throwIfAborted();
    const result = await transfer.putPets(batch);
    if ("conflict" in result) {
      throw new ImportError(
        `pet ${result.conflict} was written in the store meanwhile, as another pet: stopped after ${counts.petsWritten} pets`,
      );
    }
    counts.petsWritten += result.written;
    done += batch.length;
    options.onProgress?.(done, total);
  }
}

/**
 * Writes a checked input into a store: marks the store (unless this is the same import run again,
 * which finishes it whatever was served meanwhile), moves the sequence, writes the key records,
 * then the pets, and clears the mark.
 */
async function writeInput(store: GuardedTransfer, input: CheckedInput, options: ImportOptions): Promise<ImportResult> {
  const { transfer } = store;
  const { header } = input;
  const marks = transfer.importMark !== undefined && transfer.setImportMark !== undefined;
  const unfinished = marks ? await transfer.importMark?.() : undefined;
  if (unfinished !== undefined && unfinished.input !== input.digest) throw new ImportError(anotherImport(unfinished));
  // The same import again: its first run's check passed, and it writes what that run meant to.
  const resuming = unfinished !== undefined;
  const { writes } = await checkStore(store, input, { ...options, merge: options.merge === true || resuming });
  if (marks && !resuming) {
    const mark = {
      input: input.digest,
      startedAt: new Date().toISOString(),
      lastId: (await transfer.nextId()) - 1,
      pets: writes,
    };
    await transfer.setImportMark?.(mark);
    options.onMarked?.(mark);
    // Every store serving this backend reads the mark again within this time: no create after it.
    await pause(MARK_SEEN_MS, options.signal);
  } else if (unfinished !== undefined) options.onMarked?.(unfinished);
  const total = header.pets + header.keys;
  const counts = { keysWritten: 0, keysExpired: 0, petsWritten: 0 };
  try {
    await writeRecords(transfer, input, options, total, counts);
  } catch (error) {
    // Refused before this run wrote anything (the file changed since its check): no mark is left.
    const wroteNothing = counts.keysWritten === 0 && counts.petsWritten === 0;
    if (error instanceof ImportError && marks && !resuming && wroteNothing) await transfer.setImportMark?.(undefined);
    throw error;
  }
  const { keysWritten, keysExpired, petsWritten } = counts;
  if (marks) await transfer.setImportMark?.(undefined);
  return {
    pets: header.pets,
    petsWritten,
    petsPresent: header.pets - petsWritten,
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

/**
 * `importStore` from an export file (`-`: standard input; a pipe or a FIFO likewise), read once as
 * it is checked and again (or its copy) as it is written, never held in memory.
 */
export async function importFile(
  storage: PetStorage,
  path: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const store = transferOf(storage);
  const input = await checkFile(path, options.signal);
  try {
    return await writeInput(store, input, options);
  } finally {
    await input.close();
  }
}

/** What `abandonImport` undid. */
export interface AbandonResult {
  /** The unfinished import's mark (when it started, what it wrote). */
  mark: ImportMark;
  /** The pets and key records removed. */
  pets: number;
  keys: number;
}

/**
 * Undoes an unfinished import (`petstore import --abandon`): removes the pets and key records it
 * wrote (by its mark), sets the sequence back, and clears the mark. Resolves undefined when the
 * store holds no unfinished import.
 * @example await abandonImport(await openStorage(url))
 */
export async function abandonImport(storage: PetStorage): Promise<AbandonResult | undefined> {
  const { transfer } = transferOf(storage);
  const mark = await transfer.importMark?.();
  if (mark === undefined || transfer.undoImport === undefined) return undefined;
  const removed = await transfer.undoImport(mark);
  await transfer.setImportMark?.(undefined);
  return { mark, ...removed };
}
