/**
 * SQLite storage: pet values in Keyv (@keyv/sqlite, table `<table>_values`), and on the same
 * connection what Keyv cannot do: a one-row sequence table `<table>_seq` (capped at 2^53-1) and
 * an index table `<table>_index (id integer primary key, status)` with an index on
 * `(status, id)`, so a page is one index range scan (O(log n + limit)) whatever the filter.
 *
 * The file is in WAL mode and every connection waits for a lock up to the operation time-out
 * (busy timeout), so several processes can share one file. `synchronous=NORMAL`: a clean stop
 * or a crash of the process loses nothing; a power cut may lose the last commits. Up to
 * `mmapBytes` of the file are read through memory-mapped I/O. The WAL file is cut back to 64 MiB
 * when a large write grew it past that.
 */
import type { Pet } from "../schemas.ts";
import { causeOf, StorageConfigError } from "./config-error.ts";
import { loadDriver } from "./driver.ts";
import type { ListPage, PetData, PetStorage } from "./port.ts";
import {
  checkNewId,
  indexedId,
  petValues,
  readPet,
  readPets,
  sequenceExhausted,
  storageClosed,
  writePet,
} from "./values.ts";

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
const MAX_ID = 9007199254740991;
const MMAP_BYTES = 256 * 1024 * 1024;
/** What the WAL file is cut back to after a checkpoint, when a large write grew it past this. */
const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

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
 * Why the file cannot be opened for writing, from the system itself (SQLite only says
 * SQLITE_CANTOPEN): the error of opening it as SQLite would (ENOENT, ENOTDIR, EACCES, EROFS,
 * EISDIR…), or `undefined` when it opens. A file this check creates is removed again.
 */
async function fileProblem(path: string): Promise<Error | undefined> {
  if (path === ":memory:" || path.startsWith("file:")) return undefined;
  // Loaded here, on a failed open only: the core (a Worker bundle included) imports no node:fs.
  const { closeSync, existsSync, openSync, unlinkSync } = await import("node:fs");
  const existed = existsSync(path);
  try {
    closeSync(openSync(path, "a"));
    if (!existed) unlinkSync(path);
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

/**
 * Opens (and creates when missing) a SQLite storage; rejects with StorageConfigError when the
 * driver is missing or the file cannot be opened. @example await sqliteStorage({ path: "./pets.db" })
 */
export async function sqliteStorage(options: SqliteStorageOptions): Promise<PetStorage> {
  const { path, table: t, timeoutMs, mmapBytes } = checkOptions(options);
  const { default: KeyvSqlite } = await loadDriver<KeyvSqliteDriver>("@keyv/sqlite", "sqlite");

  const store = new KeyvSqlite({ uri: `sqlite://${path}`, table: `${t}_values`, busyTimeout: timeoutMs });
  const values = petValues(store, { namespace: "pets", keyPrefix: true });
  const query = (sql: string, ...params: unknown[]): Promise<Record<string, unknown>[]> => store.query(sql, ...params);
  let closing: Promise<void> | undefined;
  // A closed store refuses calls before they reach the driver (@keyv/redis would even reconnect).
  const ensureOpen = () => {
    if (closing !== undefined) throw storageClosed("sqlite");
  };
  const close = () => {
    closing ??= store.disconnect().catch(() => {});
    return closing;
  };

  try {
    // One statement a call: the driver runs only the first statement of a string.
    await query("PRAGMA journal_mode = WAL");
    await query("PRAGMA synchronous = NORMAL");
    // Pages of a large file read as memory, not one pread() each (the main file only; the WAL is read as before).
    await query(`PRAGMA mmap_size = ${mmapBytes}`);
    // A WAL file is reused, never shrunk: one large write would leave it that large for good.
    await query(`PRAGMA journal_size_limit = ${WAL_LIMIT_BYTES}`);
    await query(`CREATE TABLE IF NOT EXISTS ${t}_seq (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL)`);
    await query(`INSERT OR IGNORE INTO ${t}_seq (id, value) VALUES (1, 0)`);
    await query(
      `CREATE TABLE IF NOT EXISTS ${t}_index (id INTEGER PRIMARY KEY, status TEXT NOT NULL CHECK (status IN ('available', 'pending', 'sold')))`,
    );
    await query(`CREATE INDEX IF NOT EXISTS ${t}_index_status_id ON ${t}_index (status, id)`);
  } catch (error) {
    await close();
    throw new StorageConfigError(
      `cannot open sqlite storage at ${path}: ${causeOf((await fileProblem(path)) ?? error)}`,
      {
        cause: error,
      },
    );
  }

  return {
    kind: "sqlite",
    async create(data: PetData): Promise<Pet> {
      ensureOpen();
      const rows = await query(
        `UPDATE ${t}_seq SET value = value + 1 WHERE id = 1 AND value < ${MAX_ID} RETURNING value AS id`,
      );
      if (rows.length === 0) throw sequenceExhausted("sqlite");
      const id = checkNewId(rows[0]?.id, "sqlite");
      const pet: Pet = { id, name: data.name, categoryId: data.categoryId, status: data.status };
      return writePet(values, pet, () => query(`INSERT INTO ${t}_index (id, status) VALUES (?, ?)`, id, pet.status));
    },
    async get(id: number): Promise<Pet | undefined> {
      ensureOpen();
      return readPet(
        id,
        "sqlite",
        async () => (await query(`SELECT 1 AS found FROM ${t}_index WHERE id = ?`, id)).length > 0,
        () => values.get(String(id)),
      );
    },
    async list({ status, after, limit }: ListPage): Promise<Pet[]> {
      ensureOpen();
      const rows =
        status === undefined
          ? await query(`SELECT id FROM ${t}_index WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
          : await query(
              `SELECT id FROM ${t}_index WHERE status = ? AND id > ? ORDER BY id LIMIT ?`,
              status,
              after,
              limit,
            );
      return readPets(
        values,
        rows.map((row) => indexedId(row.id, "sqlite")),
        "sqlite",
      );
    },
    async ping() {
      ensureOpen();
      await query("SELECT 1");
    },
    close,
    /** Empties this store's own tables (`<table>_*` that it created) and restarts its sequence at 1. */
    async clear() {
      ensureOpen();
      const own = [`${t}_index`, `${t}_values`, `${t}_idempotency`];
      const found = await query(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${own.map(() => "?").join(", ")})`,
        ...own,
      );
      for (const { name } of found) await query(`DELETE FROM "${String(name)}"`);
      await query(`UPDATE ${t}_seq SET value = 0 WHERE id = 1`);
    },
  };
}
