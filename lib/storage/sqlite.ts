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
 *
 * Writes are transactions: a create writes its value, its index entry and (for an idempotent
 * create) its key record in `<table>_idempotency` in one `BEGIN IMMEDIATE` transaction. The
 * driver shares one connection among all calls, so write transactions are serialised in this
 * process (another call's statements would otherwise land inside, or be rolled back with, a
 * transaction); other processes wait on the file lock.
 */
import type { Pet } from "../schemas.ts";
import { reason, StorageConfigError } from "./config-error.ts";
import { loadDriver } from "./driver.ts";
import type { CreateOnceResult, IdempotencyRecord, ListPage, PetData, PetStorage } from "./port.ts";
import {
  checkNewId,
  indexedId,
  petValues,
  readPet,
  readPets,
  sequenceExhausted,
  serializedPet,
  storageClosed,
  toPet,
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
/** Expired idempotency records are deleted at most this often (by the writes' clock), this many at a time. */
const SWEEP_EVERY_MS = 60_000;
const SWEEP_BATCH = 500;

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
    await query(
      `CREATE TABLE IF NOT EXISTS ${t}_idempotency (scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, pet_id INTEGER NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (scope, key)) WITHOUT ROWID`,
    );
    await query(`CREATE INDEX IF NOT EXISTS ${t}_idempotency_expires_at ON ${t}_idempotency (expires_at)`);
  } catch (error) {
    await close();
    throw new StorageConfigError(`cannot open sqlite storage at ${path}: ${reason(error)}`, { cause: error });
  }

  let writing: Promise<unknown> = Promise.resolve();
  /** Runs `work` after every write this process started before it (one connection: no interleaving). */
  const serialised = <T>(work: () => Promise<T>): Promise<T> => {
    const run = writing.then(work, work);
    writing = run.catch(() => {});
    return run;
  };
  /** One write transaction; rolled back on any failure. Call inside `serialised`. */
  const transaction = async <T>(work: () => Promise<T>): Promise<T> => {
    await query("BEGIN IMMEDIATE");
    try {
      const result = await work();
      await query("COMMIT");
      return result;
    } catch (error) {
      await query("ROLLBACK").catch(() => {});
      throw error;
    }
  };
  /** Takes the next id and writes the pet's value (Keyv's row and format) and index entry. Inside a transaction. */
  const insertPet = async (data: PetData): Promise<Pet> => {
    const rows = await query(
      `UPDATE ${t}_seq SET value = value + 1 WHERE id = 1 AND value < ${MAX_ID} RETURNING value AS id`,
    );
    if (rows.length === 0) throw sequenceExhausted("sqlite");
    const id = checkNewId(rows[0]?.id, "sqlite");
    const pet: Pet = { id, name: data.name, categoryId: data.categoryId, status: data.status };
    await query(`INSERT INTO ${t}_values (key, value) VALUES (?, ?)`, `pets:${id}`, await serializedPet(values, pet));
    await query(`INSERT INTO ${t}_index (id, status) VALUES (?, ?)`, id, pet.status);
    return pet;
  };
  let sweptAt = Number.NEGATIVE_INFINITY;
  /** Deletes a batch of expired idempotency records when the last sweep is a minute old (by the writes' clock). */
  const sweep = async (now: number): Promise<void> => {
    if (now - sweptAt < SWEEP_EVERY_MS) return;
    sweptAt = now;
    await query(
      `DELETE FROM ${t}_idempotency WHERE (scope, key) IN (SELECT scope, key FROM ${t}_idempotency WHERE expires_at <= ? LIMIT ${SWEEP_BATCH})`,
      now,
    ).catch(() => {});
  };

  return {
    kind: "sqlite",
    async create(data: PetData): Promise<Pet> {
      ensureOpen();
      return serialised(() => transaction(() => insertPet(data)));
    },
    async findOnce({ scope, key, fingerprint, now }: IdempotencyRecord): Promise<CreateOnceResult | undefined> {
      ensureOpen();
      const [found] = await query(
        `SELECT fingerprint, pet_id FROM ${t}_idempotency WHERE scope = ? AND key = ? AND expires_at > ?`,
        scope,
        key,
        now,
      );
      if (found === undefined) return undefined;
      if (found.fingerprint !== fingerprint) return { conflict: "reused" };
      const id = Number(found.pet_id);
      return { pet: toPet(await values.get(String(id)), id, "sqlite"), replayed: true };
    },
    async createOnce(data: PetData, record: IdempotencyRecord): Promise<CreateOnceResult> {
      ensureOpen();
      const { scope, key, fingerprint, now, expiresAt } = record;
      const outcome = await serialised(async () => {
        const done = await transaction(async (): Promise<CreateOnceResult | { replay: number }> => {
          // Claims the key for the next id in one statement: inserted, or an expired record
          // replaced; nothing comes back when an unexpired record holds the key.
          const claimed = await query(
            `INSERT INTO ${t}_idempotency (scope, key, fingerprint, pet_id, expires_at)
             VALUES (?, ?, ?, (SELECT value + 1 FROM ${t}_seq WHERE id = 1), ?)
             ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, pet_id = excluded.pet_id, expires_at = excluded.expires_at
             WHERE ${t}_idempotency.expires_at <= ?
             RETURNING pet_id`,
            scope,
            key,
            fingerprint,
            expiresAt,
            now,
          );
          if (claimed.length === 0) {
            const [found] = await query(
              `SELECT fingerprint, pet_id FROM ${t}_idempotency WHERE scope = ? AND key = ?`,
              scope,
              key,
            );
            if (found === undefined) throw new Error("sqlite storage: the key record vanished in its transaction");
            return found.fingerprint === fingerprint ? { replay: Number(found.pet_id) } : { conflict: "reused" };
          }
          const pet = await insertPet(data);
          if (pet.id !== Number(claimed[0]?.pet_id))
            throw new Error("sqlite storage: the sequence moved within a transaction");
          return { pet, replayed: false };
        });
        await sweep(now);
        return done;
      });
      if (!("replay" in outcome)) return outcome;
      // Pets never change once created: the value read now is the one first answered.
      return { pet: toPet(await values.get(String(outcome.replay)), outcome.replay, "sqlite"), replayed: true };
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
      // A write like any other: after the writes before it, never inside one's transaction.
      await serialised(async () => {
        const own = [`${t}_index`, `${t}_values`, `${t}_idempotency`];
        const found = await query(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${own.map(() => "?").join(", ")})`,
          ...own,
        );
        for (const { name } of found) await query(`DELETE FROM "${String(name)}"`);
        await query(`UPDATE ${t}_seq SET value = 0 WHERE id = 1`);
      });
    },
  };
}
