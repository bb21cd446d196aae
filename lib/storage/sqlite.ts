/**
 * SQLite storage: pet values in Keyv's table (@keyv/sqlite, `<table>_values`, Keyv's format), and
 * beside it what Keyv cannot do: a one-row sequence table `<table>_seq` (capped at 2^53-1) and an
 * index table `<table>_index (id integer primary key, status)` with an index on `(status, id)`.
 * A page is one statement, compiled once: the index range (O(log n + limit) whatever the filter)
 * joined to Keyv's values. The statements run on a connection of this file's own (Keyv's keeps
 * its statements uncompiled and its connection to itself), opened after Keyv's.
 *
 * The file is in WAL mode and every connection waits for a lock up to the operation time-out
 * (busy timeout), so several processes can share one file. `synchronous=NORMAL`: a clean stop
 * or a crash of the process loses nothing; a power cut may lose the last commits. Up to
 * `mmapBytes` of the file are read through memory-mapped I/O. The WAL file is cut back to 64 MiB
 * when a large write grew it past that.
 *
 * A create, with or without an idempotency key, is one `BEGIN IMMEDIATE` transaction of three
 * calls to the driver: BEGIN, the next id, then the value (Keyv's row and format), the index entry,
 * the key's record (idempotent creates) and COMMIT in one `exec`. A key that already has a record
 * makes that insert fail: rolled back, the create is then decided by the key's compiled claim.
 * All calls share the connection, so write transactions are serialised in this process (another
 * call's statements would otherwise land inside, or be rolled back with, a transaction); other
 * processes wait on the file lock.
 */
import type { Pet } from "../schemas.ts";
import { causeOf, StorageConfigError } from "./config-error.ts";
import { loadDriver, requireFromDriver } from "./driver.ts";
import type { CreateOnceResult, IdempotencyRecord, ListPage, PetData, PetStorage } from "./port.ts";
import {
  checkNewId,
  indexedId,
  petValues,
  sequenceExhausted,
  serializedPetAround,
  storageClosed,
  storedPet,
} from "./values.ts";

type KeyvSqliteDriver = typeof import("@keyv/sqlite");
type Sqlite3 = typeof import("sqlite3");
type Database = import("sqlite3").Database;
type Statement = import("sqlite3").Statement;
type Row = Record<string, unknown>;

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

/** Opens the database file (created when missing) with the driver under @keyv/sqlite. */
function openDatabase(sqlite3: Sqlite3, path: string): Promise<Database> {
  return new Promise((resolve, reject) => {
    const db: Database = new sqlite3.Database(path, (error) => (error ? reject(error) : resolve(db)));
  });
}

/** Every row `sql` gives, on `db`. */
function all(db: Database, sql: string, params: unknown[] = []): Promise<Row[]> {
  return new Promise((resolve, reject) =>
    db.all(sql, params, (error, rows) => (error ? reject(error) : resolve(rows as Row[]))),
  );
}

/** Runs `sql`, one or more statements separated by ";", in one call to the driver (no rows back). */
function exec(db: Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (error) => (error ? reject(error) : resolve())));
}

/** `text` as an SQL string literal (only `'` needs escaping in SQLite's). */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** A statement compiled once; `all(params)` runs it (the driver queues calls on one statement). */
interface Prepared {
  all(params: unknown[]): Promise<Row[]>;
  finalize(): Promise<void>;
}

function prepare(db: Database, sql: string): Promise<Prepared> {
  return new Promise((resolve, reject) => {
    const statement: Statement = db.prepare(sql, (error) => {
      if (error) return reject(error);
      resolve({
        all: (params) =>
          new Promise((done, fail) =>
            statement.all(params, (failure: Error | null, rows: Row[]) => (failure ? fail(failure) : done(rows))),
          ),
        finalize: () => new Promise((done) => statement.finalize(() => done())),
      });
    });
  });
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
  const sqlite3 = requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");

  // Keyv's own store of the values (its table, its format); the statements below run on a
  // connection of this file's own, which can keep them compiled.
  const store = new KeyvSqlite({ uri: `sqlite://${path}`, table: `${t}_values`, busyTimeout: timeoutMs });
  const values = petValues(store, { namespace: "pets", keyPrefix: true });
  // Keyv's connection opens now; a file it cannot open is reported below, never as an unheard rejection.
  const keyvOpened = store.query("SELECT 1");
  keyvOpened.catch(() => {});
  let db: Database | undefined;
  const statements: Prepared[] = [];
  let closing: Promise<void> | undefined;
  /** The last write this process started (writes run one after another). */
  let writing: Promise<unknown> = Promise.resolve();
  // A closed store refuses calls before they reach the driver.
  const ensureOpen = () => {
    if (closing !== undefined) throw storageClosed("sqlite");
  };
  const close = () => {
    closing ??= (async () => {
      await writing;
      await Promise.all(statements.map((statement) => statement.finalize()));
      const own = db;
      if (own !== undefined) await new Promise<void>((resolve) => own.close(() => resolve()));
      await store.disconnect().catch(() => {});
    })();
    return closing;
  };

  let compiled: Record<
    "begin" | "rollback" | "next" | "claim" | "find" | "findLive" | "page" | "statusPage" | "one" | "value1",
    Prepared
  >;
  try {
    // One connection at a time opens the file: two opening a WAL file together may meet
    // SQLITE_BUSY (its recovery) without the busy time-out applying.
    await keyvOpened;
    const own = await openDatabase(sqlite3, path);
    db = own;
    own.configure("busyTimeout", timeoutMs);
    const query = (sql: string) => all(own, sql);
    await query("PRAGMA journal_mode = WAL");
    await query("PRAGMA synchronous = NORMAL");
    // Pages of a large file read as memory, not one pread() each (the main file only; the WAL is read as before).
    await query(`PRAGMA mmap_size = ${mmapBytes}`);
    // A WAL file is reused, never shrunk: one large write would leave it that large for good.
    await query(`PRAGMA journal_size_limit = ${WAL_LIMIT_BYTES}`);
    // Keyv's table, as @keyv/sqlite creates it (its own connection does the same, maybe later).
    await query(`CREATE TABLE IF NOT EXISTS ${t}_values(key VARCHAR(255) PRIMARY KEY, value TEXT )`);
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
    const compile = async (sql: string) => {
      const statement = await prepare(own, sql);
      statements.push(statement);
      return statement;
    };
    // A page is one statement: the index range joined to Keyv's values (a missing value comes back null).
    const page = (where: string) =>
      compile(
        `SELECT i.id AS id, v.value AS value FROM ${t}_index i LEFT JOIN ${t}_values v ON v.key = 'pets:' || i.id WHERE ${where} ORDER BY i.id LIMIT ?`,
      );
    compiled = {
      begin: await compile("BEGIN IMMEDIATE"),
      rollback: await compile("ROLLBACK"),
      next: await compile(
        `UPDATE ${t}_seq SET value = value + 1 WHERE id = 1 AND value < ${MAX_ID} RETURNING value AS id`,
      ),
      // Claims the key for the next id in one statement: inserted, or an expired record
      // replaced; nothing comes back when an unexpired record holds the key.
      claim: await compile(
        `INSERT INTO ${t}_idempotency (scope, key, fingerprint, pet_id, expires_at)
         VALUES (?, ?, ?, (SELECT value + 1 FROM ${t}_seq WHERE id = 1), ?)
         ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, pet_id = excluded.pet_id, expires_at = excluded.expires_at
         WHERE ${t}_idempotency.expires_at <= ?
         RETURNING pet_id`,
      ),
      find: await compile(`SELECT fingerprint, pet_id FROM ${t}_idempotency WHERE scope = ? AND key = ?`),
      findLive: await compile(
        `SELECT fingerprint, pet_id FROM ${t}_idempotency WHERE scope = ? AND key = ? AND expires_at > ?`,
      ),
      page: await page("i.id > ?"),
      statusPage: await page("i.status = ? AND i.id > ?"),
      one: await compile(
        `SELECT v.value AS value FROM ${t}_index i LEFT JOIN ${t}_values v ON v.key = 'pets:' || i.id WHERE i.id = ?`,
      ),
      value1: await compile(`SELECT value FROM ${t}_values WHERE key = ?`),
    };
  } catch (error) {
    await close();
    throw new StorageConfigError(
      `cannot open sqlite storage at ${path}: ${causeOf((await fileProblem(path)) ?? error)}`,
      {
        cause: error,
      },
    );
  }
  const c = compiled;
  const own = db as Database;

  /** Runs `work` after every write this process started before it (one connection: no interleaving). */
  const serialised = <T>(work: () => Promise<T>): Promise<T> => {
    const run = writing.then(work, work);
    writing = run.catch(() => {});
    return run;
  };
  /**
   * The end of a create's transaction, in one call to the driver (each call is a hand-off to a
   * thread and back, the bulk of a create's time): `before` (the sequence moved by a claim, or the
   * key's record), the pet's value (Keyv's row and format) and index entry, COMMIT. The values are
   * literals: the id a checked integer, the status one of three words, the texts without NUL
   * (JSON has none; keys that hold one take the compiled path) with their `'` doubled.
   */
  const writePet = (id: number, data: PetData, [head, tail]: [string, string], before: string) =>
    exec(
      own,
      before +
        `INSERT INTO ${t}_values (key, value) VALUES ('pets:${id}', ${literal(head + id + tail)});` +
        `INSERT INTO ${t}_index (id, status) VALUES (${id}, ${literal(data.status)});` +
        "COMMIT",
    );
  let sweptAt = Number.NEGATIVE_INFINITY;
  /** Deletes a batch of expired idempotency records when the last sweep is a minute old (by the writes' clock). */
  const sweep = async (now: number): Promise<void> => {
    if (now - sweptAt < SWEEP_EVERY_MS) return;
    sweptAt = now;
    await all(
      own,
      `DELETE FROM ${t}_idempotency WHERE (scope, key) IN (SELECT scope, key FROM ${t}_idempotency WHERE expires_at <= ? LIMIT ${SWEEP_BATCH})`,
      [now],
    ).catch(() => {});
  };
  /** The next id, taken inside a transaction. */
  const nextId = async (): Promise<number> => {
    const rows = await c.next.all([]);
    if (rows.length === 0) throw sequenceExhausted("sqlite");
    return checkNewId(rows[0]?.id, "sqlite");
  };
  /** What a create that wrote pet `id` resolves. */
  const createdPet = (id: number, data: PetData): CreateOnceResult => ({
    pet: { id, name: data.name, categoryId: data.categoryId, status: data.status },
    replayed: false,
  });
  /**
   * A create with a key that has no record yet (nearly always): the same three calls as a plain
   * create, the key's record written with the pet as one more literal row. Undefined, nothing
   * written, when the key has a record (even an expired one): `claimed` then decides.
   */
  const withFreshKey = async (data: PetData, text: [string, string], r: IdempotencyRecord) => {
    await c.begin.all([]);
    try {
      const id = await nextId();
      const keyRow =
        `INSERT INTO ${t}_idempotency (scope, key, fingerprint, pet_id, expires_at) VALUES ` +
        `(${literal(r.scope)}, ${literal(r.key)}, ${literal(r.fingerprint)}, ${id}, ${Math.trunc(r.expiresAt)});`;
      await writePet(id, data, text, keyRow);
      await sweep(r.now);
      return createdPet(id, data);
    } catch (error) {
      await c.rollback.all([]).catch(() => {});
      if (String((error as Error)?.message).includes(`UNIQUE constraint failed: ${t}_idempotency.`)) return undefined;
      throw error;
    }
  };
  /**
   * A create by compiled statements: without a key, the next id; with one, the key's claim for the
   * next id (an expired record is replaced), or the record that holds the key (nothing is written).
   * Then the pet and COMMIT in one call.
   */
  const claimed = async (
    data: PetData,
    text: [string, string],
    record: IdempotencyRecord | undefined,
  ): Promise<CreateOnceResult | { replay: number }> => {
    await c.begin.all([]);
    let open = true;
    try {
      let id: number;
      let sequence = "";
      if (record === undefined) id = await nextId();
      else {
        const { scope, key, fingerprint, expiresAt, now } = record;
        const claim = await c.claim.all([scope, key, fingerprint, expiresAt, now]);
        if (claim.length === 0) {
          const [found] = await c.find.all([scope, key]);
          open = false;
          await c.rollback.all([]); // nothing was written
          if (found === undefined) throw new Error("sqlite storage: the key record vanished in its transaction");
          return found.fingerprint === fingerprint ? { replay: Number(found.pet_id) } : { conflict: "reused" };
        }
        id = checkNewId(claim[0]?.pet_id, "sqlite");
        sequence = `UPDATE ${t}_seq SET value = ${id} WHERE id = 1;`; // the claim took seq + 1
      }
      await writePet(id, data, text, sequence);
      open = false;
      if (record !== undefined) await sweep(record.now);
      return createdPet(id, data);
    } catch (error) {
      if (open) await c.rollback.all([]).catch(() => {});
      throw error;
    }
  };

  /**
   * One create: serialised `BEGIN IMMEDIATE` transactions of three calls to the driver each. With
   * a key, first as if the key were fresh; when it has a record, by its claim (`claimed`).
   */
  const created = async (data: PetData, record: IdempotencyRecord | undefined): Promise<CreateOnceResult> => {
    // Keyv's text of the pet, its id to come (the value is written in Keyv's format).
    const text = serializedPetAround(values, data);
    const outcome = await serialised(async (): Promise<CreateOnceResult | { replay: number }> => {
      if (record !== undefined && !/\0/.test(record.scope + record.key + record.fingerprint)) {
        const fresh = await withFreshKey(data, text, record);
        if (fresh !== undefined) return fresh;
      }
      return claimed(data, text, record);
    });
    if (!("replay" in outcome)) return outcome;
    // Pets never change once created: the value read now is the one first answered.
    const [row] = await c.value1.all([`pets:${outcome.replay}`]);
    return { pet: storedPet(outcome.replay, row?.value, values, "sqlite"), replayed: true };
  };

  return {
    kind: "sqlite",
    async create(data: PetData): Promise<Pet> {
      ensureOpen();
      const result = await created(data, undefined);
      if ("conflict" in result) throw new Error("sqlite storage: a create without a key met a key");
      return result.pet;
    },
    async findOnce({ scope, key, fingerprint, now }: IdempotencyRecord): Promise<CreateOnceResult | undefined> {
      ensureOpen();
      const [found] = await c.findLive.all([scope, key, now]);
      if (found === undefined) return undefined;
      if (found.fingerprint !== fingerprint) return { conflict: "reused" };
      const id = Number(found.pet_id);
      const [row] = await c.value1.all([`pets:${id}`]);
      return { pet: storedPet(id, row?.value, values, "sqlite"), replayed: true };
    },
    async createOnce(data: PetData, record: IdempotencyRecord): Promise<CreateOnceResult> {
      ensureOpen();
      return created(data, record);
    },
    async get(id: number): Promise<Pet | undefined> {
      ensureOpen();
      const [row] = await c.one.all([id]);
      return row === undefined ? undefined : storedPet(id, row.value, values, "sqlite");
    },
    async list({ status, after, limit }: ListPage): Promise<Pet[]> {
      ensureOpen();
      const rows = await (status === undefined ? c.page.all([after, limit]) : c.statusPage.all([status, after, limit]));
      const pets: Pet[] = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i] as Row;
        pets[i] = storedPet(indexedId(row.id, "sqlite"), row.value, values, "sqlite");
      }
      return pets;
    },
    async ping() {
      ensureOpen();
      await all(own, "SELECT 1");
    },
    close,
    /** Empties this store's own tables (`<table>_*` that it created) and restarts its sequence at 1. */
    async clear() {
      ensureOpen();
      // A write like any other: after the writes before it, never inside one's transaction.
      await serialised(async () => {
        const tables = [`${t}_index`, `${t}_values`, `${t}_idempotency`];
        const found = await all(
          own,
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${tables.map(() => "?").join(", ")})`,
          tables,
        );
        for (const { name } of found) await all(own, `DELETE FROM "${String(name)}"`);
        await all(own, `UPDATE ${t}_seq SET value = 0 WHERE id = 1`);
      });
    },
  };
}
