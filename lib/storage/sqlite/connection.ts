/**
 * SQLite storage, its own write connection: opens the file with the driver under @keyv/sqlite
 * (Keyv's connection keeps its statements uncompiled), sets the PRAGMAs (busy time-out, WAL,
 * synchronous, memory-mapped reads, WAL size limit), creates the tables and indexes when missing
 * and compiles the write statements once. Also the promise wrappers of the driver's callbacks.
 */

import { loadNodeBuiltin } from "../../node-builtin.ts";

export type Sqlite3 = typeof import("sqlite3");
export type Database = import("sqlite3").Database;
type Statement = import("sqlite3").Statement;
export type Row = Record<string, unknown>;

const MAX_ID = 9007199254740991;
/** What the WAL file is cut back to after a checkpoint, when a large write grew it past this. */
const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Opens the database file with the driver under @keyv/sqlite: by default to read and write
 * (created when missing), or with the driver's `mode` flags (e.g. read-only).
 */
export function openDatabase(sqlite3: Sqlite3, path: string, mode?: number): Promise<Database> {
  return new Promise((resolve, reject) => {
    const opened = (error: Error | null) => (error ? reject(error) : resolve(db));
    const db: Database =
      mode === undefined ? new sqlite3.Database(path, opened) : new sqlite3.Database(path, mode, opened);
  });
}

/** Closes `db` once the calls queued on it have run (its statements finalised first); never rejects. */
export function closeDatabase(db: Database): Promise<void> {
  return new Promise((resolve) => db.close(() => resolve()));
}

/** Every row `sql` gives, on `db`. */
export function queryAll(db: Database, sql: string, params: unknown[] = []): Promise<Row[]> {
  return new Promise((resolve, reject) =>
    db.all(sql, params, (error, rows) => (error ? reject(error) : resolve(rows as Row[]))),
  );
}

/** Runs `sql`, one or more statements separated by ";", in one call to the driver (no rows back). */
export function exec(db: Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (error) => (error ? reject(error) : resolve())));
}

/** `text` as an SQL string literal (only `'` needs escaping in SQLite's). */
export const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** A statement compiled once; `all(params)` runs it (the driver queues calls on one statement). */
export interface Prepared {
  all(params: unknown[]): Promise<Row[]>;
  finalize(): Promise<void>;
}

/** Compiles `sql` on `db`. */
export function prepare(db: Database, sql: string): Promise<Prepared> {
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

/** The write statements of a store, compiled once on its write connection. */
export type WriteStatements = Record<"begin" | "rollback" | "nextId" | "claim" | "find", Prepared>;

/** Whether `error` is SQLite's SQLITE_BUSY (any of its extended codes). */
const isBusy = (error: unknown) => (error as { code?: unknown } | null)?.code === "SQLITE_BUSY";

/**
 * Puts the file in WAL mode (a no-op once it is). The switch reads the file, then asks for its
 * write lock; when another connection took that lock in between (another process creating its
 * tables in a new file), SQLite answers SQLITE_BUSY at once, without its busy time-out, lest the
 * two wait on each other. So the switch is tried again until `timeoutMs` has passed.
 */
async function switchToWal(db: Database, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    try {
      await queryAll(db, "PRAGMA journal_mode = WAL");
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() + pause > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** Sets the connection's busy time-out and PRAGMAs, then creates the tables and indexes of `table` when missing. */
export async function setUpSchema(db: Database, table: string, timeoutMs: number, mmapBytes: number): Promise<void> {
  db.configure("busyTimeout", timeoutMs);
  const query = (sql: string) => queryAll(db, sql);
  await switchToWal(db, timeoutMs);
  await query("PRAGMA synchronous = NORMAL");
  // Pages of a large file read as memory, not one pread() each (the main file only; the WAL is read as before).
  await query(`PRAGMA mmap_size = ${mmapBytes}`);
  // A WAL file is reused, never shrunk: one large write would leave it that large for good.
  await query(`PRAGMA journal_size_limit = ${WAL_LIMIT_BYTES}`);
  // Keyv's table, as @keyv/sqlite creates it (its own connection does the same, maybe later).
  await query(`CREATE TABLE IF NOT EXISTS ${table}_values(key VARCHAR(255) PRIMARY KEY, value TEXT )`);
  await query(
    `CREATE TABLE IF NOT EXISTS ${table}_seq (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL)`,
  );
  await query(`INSERT OR IGNORE INTO ${table}_seq (id, value) VALUES (1, 0)`);
  await query(
    `CREATE TABLE IF NOT EXISTS ${table}_index (id INTEGER PRIMARY KEY, status TEXT NOT NULL CHECK (status IN ('available', 'pending', 'sold')), pet TEXT)`,
  );
  await query(`CREATE INDEX IF NOT EXISTS ${table}_index_status_id ON ${table}_index (status, id)`);
  await query(
    `CREATE TABLE IF NOT EXISTS ${table}_idempotency (scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, pet_id INTEGER NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (scope, key)) WITHOUT ROWID`,
  );
  await query(`CREATE INDEX IF NOT EXISTS ${table}_idempotency_expires_at ON ${table}_idempotency (expires_at)`);
  // What the store says of itself, by name: an unfinished import's mark (sqlite/transfer.ts).
  await query(`CREATE TABLE IF NOT EXISTS ${table}_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`);
  // The rate limits' counts: one row per caller and window (sqlite/rate.ts).
  await query(
    `CREATE TABLE IF NOT EXISTS ${table}_rate (scope TEXT NOT NULL, win INTEGER NOT NULL, used INTEGER NOT NULL, granted INTEGER NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (scope, win)) WITHOUT ROWID`,
  );
}

/** SQLite's result codes (node-sqlite3's `code`) that blame a value rather than the database. */
const VALUE_CODES = new Set(["SQLITE_MISMATCH", "SQLITE_TOOBIG"]);

/** Why SQLite refused a value, when its error's code says so (`failures.ts`, `blamed`); else undefined. */
export function sqliteBlamesValue(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && VALUE_CODES.has(code) ? `SQLite refused a value (${code})` : undefined;
}

/** True when SQLite refused a write for a constraint (a key already taken): node-sqlite3's `code`. */
export const isConstraint = (error: unknown) => (error as { code?: unknown } | null)?.code === "SQLITE_CONSTRAINT";

/** Compiles the store's write statements on `db`; each one compiled is added to `prepared` (to be finalised on close). */
export async function compileWrites(db: Database, table: string, prepared: Prepared[]): Promise<WriteStatements> {
  const compile = async (sql: string) => {
    const statement = await prepare(db, sql);
    prepared.push(statement);
    return statement;
  };
  return {
    begin: await compile("BEGIN IMMEDIATE"),
    rollback: await compile("ROLLBACK"),
    nextId: await compile(
      `UPDATE ${table}_seq SET value = value + 1 WHERE id = 1 AND value < ${MAX_ID} RETURNING value AS id`,
    ),
    // Claims the key for the next id in one statement: inserted, or an expired record
    // replaced; nothing comes back when an unexpired record holds the key.
    claim: await compile(
      `INSERT INTO ${table}_idempotency (scope, key, fingerprint, pet_id, expires_at)
         VALUES (?, ?, ?, (SELECT value + 1 FROM ${table}_seq WHERE id = 1), ?)
         ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, pet_id = excluded.pet_id, expires_at = excluded.expires_at
         WHERE ${table}_idempotency.expires_at <= ?
         RETURNING pet_id`,
    ),
    find: await compile(`SELECT fingerprint, pet_id FROM ${table}_idempotency WHERE scope = ? AND key = ?`),
  };
}

/**
 * Why the file cannot be opened for writing, from the system itself (SQLite only says
 * SQLITE_CANTOPEN): the error of opening it as SQLite would (ENOENT, ENOTDIR, EACCES, EROFS,
 * EISDIR…), or `undefined` when it opens. A file this check creates is removed again.
 */
export async function findFileProblem(path: string): Promise<Error | undefined> {
  if (path === ":memory:" || path.startsWith("file:")) return undefined;
  // Loaded here, on a failed open only: the core (a browser or Worker bundle included) imports no node:fs.
  const { closeSync, existsSync, openSync, unlinkSync } = await loadNodeBuiltin<typeof import("node:fs")>("node:fs");
  const existed = existsSync(path);
  try {
    closeSync(openSync(path, "a"));
    if (!existed) unlinkSync(path);
    return undefined;
  } catch (error) {
    return error as Error;
  }
}
