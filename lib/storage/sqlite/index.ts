/**
 * SQLite storage: pet values in Keyv's table (@keyv/sqlite, `<table>_values`, Keyv's format), and
 * beside it what Keyv cannot do: a one-row id sequence `<table>_seq` and an index table
 * `<table>_index (id, status, pet)` whose `pet` is the pet's served text. A page is one compiled
 * statement: the index range (O(log n + limit) whatever the filter), nothing joined. Here: the
 * options, opening, the calls and clear; the write connection and schema are in
 * sqlite/connection.ts, the served texts in sqlite/pet-texts.ts, creates in sqlite/writes.ts, the
 * read connection in sqlite/reads.ts, the check of the file under a running server in sqlite/file.ts.
 */
import type { Pet } from "../../schemas.ts";
import { causeOf, StorageConfigError } from "../config-error.ts";
import { loadDriver, requireFromDriver } from "../driver.ts";
import { blamed, InvalidRecordError, storageFailure } from "../failures.ts";
import type { CreateOnceResult, IdempotencyRecord, ListPage, PetData, PetStorage } from "../port.ts";
import { REPORT_TO } from "../report-to.ts";
import {
  indexedId,
  makeServedTextReader,
  petOfKeyvText,
  petValues,
  type RecordNames,
  storageClosed,
} from "../values.ts";
import {
  closeDatabase,
  compileWrites,
  type Database,
  exec,
  findFileProblem,
  openDatabase,
  type Prepared,
  queryAll,
  type Sqlite3,
  setUpSchema,
  sqliteBlamesValue,
  type WriteStatements,
} from "./connection.ts";
import { checkDatabaseFile, type FileCheck } from "./file.ts";
import { makeKeptPages } from "./kept-pages.ts";
import { addPetTexts, fillPetTexts } from "./pet-texts.ts";
import { makeSqliteRateCounter } from "./rate.ts";
import { inIdOrder, openReads, pageTexts, type SqliteReads } from "./reads.ts";
import { getFromRecord, readFromRecords } from "./served-copy.ts";
import { makeSqliteTransfer } from "./transfer.ts";
import { makeWriteQueue, makeWriter } from "./writes.ts";

type KeyvSqliteDriver = typeof import("@keyv/sqlite");

export interface SqliteStorageOptions {
  /** The database file (created when missing; its folder must exist). */
  path: string;
  /** Prefix of this store's table names (default "petstore"): lower-case letters, digits, `_`. */
  table?: string;
  /** How long a call waits for another process's lock, in ms (default 2000). */
  operationTimeoutMs?: number;
  /**
   * How many bytes of the file SQLite reads through memory-mapped I/O (default 256 MiB; 0 turns it
   * off): a page it reads is then a memory access instead of a system call, which keeps a page of a
   * large store about as cheap as one of a small store.
   */
  mmapBytes?: number;
}

const TABLE = /^[a-z][a-z0-9_]{0,39}$/;

/** How a SQLite store names its records: Keyv's key of a pet's value, and its own tables. */
const recordNames = (table: string): RecordNames => ({
  backend: "sqlite",
  pet: (id) => `pets:${id}`,
  index: `${table}_index`,
  sequence: `${table}_seq`,
});
const MMAP_BYTES = 256 * 1024 * 1024;

function checkOptions(options: SqliteStorageOptions) {
  const path = options?.path;
  if (typeof path !== "string" || path === "" || path.includes("\0")) {
    throw new StorageConfigError(`sqlite storage: path must be a file path (got ${JSON.stringify(path)})`);
  }
  const table = options.table ?? "petstore";
  if (!TABLE.test(table)) {
    throw new StorageConfigError(
      `sqlite storage: table must be 1 to 40 lower-case letters, digits or "_", starting with a letter (got ${JSON.stringify(table)})`,
    );
  }
  const timeoutMs = options.operationTimeoutMs ?? 2000;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) {
    throw new StorageConfigError(`sqlite storage: operationTimeoutMs must be a positive integer (got ${timeoutMs})`);
  }
  const mmapBytes = options.mmapBytes ?? MMAP_BYTES;
  if (!Number.isSafeInteger(mmapBytes) || mmapBytes < 0) {
    throw new StorageConfigError(
      `sqlite storage: mmapBytes must be an integer of 0 or more (got ${JSON.stringify(mmapBytes)})`,
    );
  }
  return { path, table, timeoutMs, mmapBytes };
}

/**
 * Opens (and creates when missing) a SQLite storage; rejects with StorageConfigError when the
 * driver is missing or the file cannot be opened. @example await sqliteStorage({ path: "./pets.db" })
 */
export async function sqliteStorage(options: SqliteStorageOptions): Promise<PetStorage> {
  const { path, table, timeoutMs, mmapBytes } = checkOptions(options);
  const { default: KeyvSqlite } = await loadDriver<KeyvSqliteDriver>("@keyv/sqlite", "sqlite");
  const sqlite3 = requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");

  // Keyv's own store of the values (its table, its format); the statements run on connections of
  // this store's own (one writes, one reads), which keep them compiled.
  const store = new KeyvSqlite({ uri: `sqlite://${path}`, table: `${table}_values`, busyTimeout: timeoutMs });
  const values = petValues(store, { namespace: "pets", keyPrefix: true });
  // Keyv's connection opens now; a file it cannot open is reported below, never as an unheard rejection.
  const keyvOpened = store.query("SELECT 1");
  keyvOpened.catch(() => {});
  let db: Database | undefined;
  /** Every write statement compiled so far, finalised on close. */
  const prepared: Prepared[] = [];
  let reads: SqliteReads | undefined;
  const queue = makeWriteQueue();
  let closing: Promise<void> | undefined;
  let file: FileCheck | undefined;
  // A closed store refuses calls before they reach the driver; so does one whose file is gone
  // (a write checks the file itself, a read a verdict of the last 100 ms: sqlite/file.ts).
  const ensureOpen = (write?: "write") => {
    if (closing !== undefined) throw storageClosed("sqlite");
    if (write === undefined) file?.verifyRecent();
    else file?.verify();
  };
  // The read connection closes first: read-only, it could not checkpoint and remove the log
  // if it were the file's last connection to close.
  const close = () => {
    closing ??= (async () => {
      await queue.idle();
      await reads?.close();
      await Promise.all(prepared.map((statement) => statement.finalize()));
      if (db !== undefined) await closeDatabase(db);
      await store.disconnect().catch(() => {});
    })();
    return closing;
  };

  let compiledWrites: WriteStatements;
  try {
    // Keyv's connection first, then ours: fewer locks met while the file switches to WAL (which
    // other processes opening it may still make wait: setUpSchema tries the switch again).
    await keyvOpened;
    const own = await openDatabase(sqlite3, path);
    db = own;
    await setUpSchema(own, table, timeoutMs, mmapBytes);
    file = await checkDatabaseFile(own, path);
    if (await addPetTexts(own, table)) await fillPetTexts(own, table, values, recordNames(table));
    compiledWrites = await compileWrites(own, table, prepared);
    reads = await openReads(sqlite3, own, { table, timeoutMs, mmapBytes }, queue.serialise);
  } catch (error) {
    await close();
    throw new StorageConfigError(
      `cannot open sqlite storage at ${path}: ${causeOf((await findFileProblem(path)) ?? error)}`,
      {
        cause: error,
      },
    );
  }
  const own = db as Database;
  const fileCheck = file as FileCheck;
  const statements = (reads as SqliteReads).statements;
  const names = recordNames(table);
  /** What no answer shows (the file removed, the sequence repaired): the store's onError once it hands it over. */
  let report: (error: Error) => void = () => {};
  const writer = makeWriter({
    db: own,
    table,
    statements: compiledWrites,
    values,
    queue,
    petValue: statements.petValue,
    names,
    warn: (error) => report(error),
  });
  const { createOnceOrReplay } = writer;
  const { serialise } = queue;
  const repairs = { db: own, table, values, serialise, names };
  const readServedText = makeServedTextReader(names);
  const keptPages = makeKeptPages();
  /**
   * The pet of an index row as the reads give it (sqlite/reads.ts): its served text, or
   * `[id, Keyv's value]` when the text is NULL. `id`: the one asked for, checked against the row's.
   */
  const readPet = (raw: unknown, id?: number): Pet => {
    if (typeof raw === "string" && raw.startsWith("{")) return readServedText(raw, id);
    let row: unknown;
    try {
      row = JSON.parse(String(raw));
    } catch {}
    if (!Array.isArray(row)) {
      const where = id === undefined ? names.index : `${names.index}:${id}`;
      throw new InvalidRecordError("sqlite", where, "the served copy is not a pet's text");
    }
    return petOfKeyvText(id ?? indexedId(row[0], names), row[1], values, names);
  };

  /** Runs a page's statement, the one filtered by status when the page is. */
  const readRange = (all: Prepared, byStatus: Prepared, { status, after, limit }: ListPage) =>
    status === undefined ? all.all([after, limit]) : byStatus.all([status, after, limit]);

  return {
    kind: "sqlite",
    // Every pet it returns was checked where it was decoded (lib/storage/values.ts).
    trustedPets: true,
    async create(data: PetData): Promise<Pet> {
      ensureOpen("write");
      const result = await createOnceOrReplay(data);
      // A create that landed in a file removed meanwhile is not acknowledged.
      fileCheck.verify();
      if ("conflict" in result) throw new Error("sqlite storage: a create without a key met a key");
      return result.pet;
    },
    async findOnce({ scope, key, fingerprint, now }: IdempotencyRecord): Promise<CreateOnceResult | undefined> {
      ensureOpen();
      const [found] = await statements.findLivePet.all([scope, key, now]);
      if (found === undefined) return undefined;
      if (found.fingerprint !== fingerprint) return { conflict: "reused" };
      const id = Number(found.pet_id);
      if (!Number.isSafeInteger(id) || id < 1) {
        throw new InvalidRecordError("sqlite", `${table}_idempotency:${key}`, "its pet id is not an integer");
      }
      return { pet: petOfKeyvText(id, found.value, values, names), replayed: true };
    },
    async createOnce(data: PetData, record: IdempotencyRecord): Promise<CreateOnceResult> {
      ensureOpen("write");
      const result = await createOnceOrReplay(data, record);
      fileCheck.verify();
      return result;
    },
    async get(id: number): Promise<Pet | undefined> {
      ensureOpen();
      try {
        const [row] = await statements.indexedPet.all([id]);
        return row === undefined ? undefined : readPet(row.pet, id);
      } catch (error) {
        const bad = blamed(error, "sqlite", names.pet(id), sqliteBlamesValue);
        if (bad instanceof InvalidRecordError) return getFromRecord(repairs, id);
        throw bad;
      }
    },
    async list(page: ListPage): Promise<Pet[]> {
      ensureOpen();
      try {
        const { status, after, limit } = page;
        const [row] = await readRange(statements.pageText, statements.statusPageText, page);
        const joined = typeof row?.pets === "string" ? row.pets : undefined;
        const kept = joined === undefined ? undefined : keptPages.find(status, after, limit, joined);
        if (kept !== undefined) return kept;
        const split = pageTexts(row);
        // A page whose texts cannot be joined (see pageTexts) is read a row a text.
        const texts = split ?? (await readRange(statements.page, statements.statusPage, page)).map((r) => r.pet);
        const pets: Pet[] = new Array(texts.length);
        // Only served texts are kept: a Keyv value in their place may expire while its text stays the same.
        let served = split !== undefined;
        for (let i = 0; i < texts.length; i++) {
          const text = texts[i];
          if (served && !(typeof text === "string" && text.startsWith("{"))) served = false;
          pets[i] = readPet(text);
        }
        const ordered = inIdOrder(pets);
        if (served && joined !== undefined) keptPages.keep(status, after, limit, joined, ordered);
        return ordered;
      } catch (error) {
        // A served copy found bad (or refused by SQLite): the page from Keyv's records, the copies rewritten.
        const bad = blamed(error, "sqlite", names.index, sqliteBlamesValue);
        if (bad instanceof InvalidRecordError) return readFromRecords(repairs, page);
        throw bad;
      }
    },
    async ping() {
      ensureOpen("write");
      await queryAll(own, "SELECT 1");
    },
    close,
    /** The store's onError: told once per change when the file is removed, replaced or truncated, and of repairs. */
    [REPORT_TO]: (onError: (error: Error) => void) => {
      report = onError;
      // As the outage it is: the failed calls' own reports of the same error are then the same line.
      fileCheck.reportTo((error) => onError(storageFailure(error)));
    },
    transfer: makeSqliteTransfer({ db: own, table, values, serialise, ensureOpen, names }),
    rateCounter: makeSqliteRateCounter({ db: own, table, serialise, ensureOpen: () => ensureOpen("write") }),
    /** Empties this store's own tables (`<table>_*` that it created) and restarts its sequence at 1. */
    async clear() {
      ensureOpen("write");
      // A write like any other: after the writes before it, never inside one's transaction; one
      // transaction of its own, so a read sees the store as it was before or after, never half.
      await serialise(async () => {
        // The index first: the values' triggers then find no served text to forget.
        const tables = [`${table}_index`, `${table}_values`, `${table}_idempotency`, `${table}_rate`, `${table}_meta`];
        const found = await queryAll(
          own,
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${tables.map(() => "?").join(", ")})`,
          tables,
        );
        const present = new Set(found.map(({ name }) => String(name)));
        const deletes = tables
          .filter((name) => present.has(name))
          .map((name) => `DELETE FROM "${name}";`)
          .join("");
        try {
          await exec(own, `BEGIN IMMEDIATE;${deletes}UPDATE ${table}_seq SET value = 0 WHERE id = 1;COMMIT`);
        } catch (error) {
          await exec(own, "ROLLBACK").catch(() => {});
          throw error;
        }
      });
    },
  };
}
