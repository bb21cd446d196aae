/**
 * SQLite storage, its reads: pages, pets and key records are read on a read-only connection of the
 * store's own, opened once the schema exists. In WAL mode each read sees the last commit, never a
 * create still in its transaction on the write connection. A database without a file (`:memory:`)
 * would be another, empty one on a second connection: there, reads wait for the writes queued.
 */
import {
  closeDatabase,
  type Database,
  openDatabase,
  type Prepared,
  prepare,
  queryAll,
  type Row,
  type Sqlite3,
} from "./connection.ts";

/** The read statements of a store: on its read connection, or queued behind its writes (`:memory:`). */
export type ReadStatements = Record<
  "findLivePet" | "page" | "statusPage" | "pageText" | "statusPageText" | "indexedPet" | "petValue",
  Prepared
>;

export interface SqliteReads {
  statements: ReadStatements;
  /** Finalises the read statements and closes the read connection, after the reads already started. */
  close(): Promise<void>;
}

export interface ReadOptions {
  table: string;
  /** The busy time-out of the read connection, in ms. */
  timeoutMs: number;
  mmapBytes: number;
}

/** Runs `work` after every write started before it, and before any started after it. */
type Serialise = <T>(work: () => Promise<T>) => Promise<T>;

/** Compiles the store's read statements on `db`; each one compiled is added to `prepared`. */
async function compileReads(db: Database, table: string, prepared: Prepared[]): Promise<ReadStatements> {
  const compile = async (sql: string) => {
    const statement = await prepare(db, sql);
    prepared.push(statement);
    return statement;
  };
  // A page is one range read of the index, one column a row (each column costs the driver a
  // conversion a row): the pet's served text, or for a text that is NULL (stale, or never
  // written: sqlite/pet-texts.ts) `[id, Keyv's value]`, the value read by its key.
  // Only a text goes into the array (JSON holds no BLOB): another type reads as a missing value.
  const petOrValue = `CASE WHEN i.pet IS NOT NULL THEN i.pet ELSE json_array(i.id, (SELECT CASE typeof(v.value) WHEN 'text' THEN v.value END FROM ${table}_values v WHERE v.key = 'pets:' || i.id)) END AS pet`;
  const range = (where: string) => `SELECT ${petOrValue} FROM ${table}_index i WHERE ${where} ORDER BY i.id LIMIT ?`;
  const compilePage = (where: string) => compile(range(where));
  // The same page as one row, its texts joined by line feeds (see pageTexts): the driver's cost
  // is per row it hands over (bench/README.md, B5).
  const compilePageText = (where: string) =>
    compile(`SELECT count(*) AS n, group_concat(pet, char(10)) AS pets FROM (${range(where)})`);
  return {
    // An unexpired key record and its pet's value, read together (one snapshot, one call).
    findLivePet: await compile(
      `SELECT r.fingerprint AS fingerprint, r.pet_id AS pet_id, v.value AS value FROM ${table}_idempotency r LEFT JOIN ${table}_values v ON v.key = 'pets:' || r.pet_id WHERE r.scope = ? AND r.key = ? AND r.expires_at > ?`,
    ),
    page: await compilePage("i.id > ?"),
    statusPage: await compilePage("i.status = ? AND i.id > ?"),
    pageText: await compilePageText("i.id > ?"),
    statusPageText: await compilePageText("i.status = ? AND i.id > ?"),
    indexedPet: await compile(`SELECT ${petOrValue} FROM ${table}_index i WHERE i.id = ?`),
    petValue: await compile(`SELECT value FROM ${table}_values WHERE key = ?`),
  };
}

/**
 * The texts of a page read as one row (`pageText`, `statusPageText`), or undefined when there are
 * more pieces than rows: a text held a line feed, which no JSON the store writes holds (minified,
 * control characters escaped), so only a foreign write to the index table could; such a page is
 * read row by row instead.
 */
export function pageTexts(row: Row | undefined): string[] | undefined {
  const count = Number(row?.n ?? 0);
  if (count === 0) return [];
  const joined = row?.pets;
  if (typeof joined !== "string") return undefined;
  const texts = joined.split("\n");
  return texts.length === count ? texts : undefined;
}

/**
 * `pets` in id order. A page's rows come in order from its range read, and SQLite joins them in
 * that order; nothing in SQL promises it to an aggregate, so it is checked (twenty comparisons).
 */
export function inIdOrder<T extends { id: number }>(pets: T[]): T[] {
  for (let i = 1; i < pets.length; i++) {
    if ((pets[i] as T).id <= (pets[i - 1] as T).id) return pets.sort((a, b) => a.id - b.id);
  }
  return pets;
}

/** `statements`, each run through `serialise`: never inside a write's transaction on a shared connection. */
function queueBehindWrites(statements: ReadStatements, serialise: Serialise): ReadStatements {
  const queued = (statement: Prepared): Prepared => ({
    all: (params) => serialise(() => statement.all(params)),
    finalize: () => statement.finalize(),
  });
  return {
    findLivePet: queued(statements.findLivePet),
    page: queued(statements.page),
    statusPage: queued(statements.statusPage),
    pageText: queued(statements.pageText),
    statusPageText: queued(statements.statusPageText),
    indexedPet: queued(statements.indexedPet),
    petValue: queued(statements.petValue),
  };
}

/**
 * Opens the reads of the store whose write connection is `writeDb` (the schema made): a
 * read-only connection to the same file, with the store's busy time-out and memory-mapped reads,
 * or for a database without a file the write connection, each read run through `serialise`.
 * A failure closes what it opened.
 */
export async function openReads(
  sqlite3: Sqlite3,
  writeDb: Database,
  { table, timeoutMs, mmapBytes }: ReadOptions,
  serialise: Serialise,
): Promise<SqliteReads> {
  const prepared: Prepared[] = [];
  const finalize = () => Promise.all(prepared.map((statement) => statement.finalize()));
  // The file the write connection has open, as SQLite names it ("" for :memory:).
  const databases = await queryAll(writeDb, "PRAGMA database_list");
  const file = String(databases.find((database) => database.name === "main")?.file ?? "");
  if (file === "") {
    try {
      const statements = queueBehindWrites(await compileReads(writeDb, table, prepared), serialise);
      return { statements, close: async () => void (await finalize()) };
    } catch (error) {
      await finalize();
      throw error;
    }
  }
  const db = await openDatabase(sqlite3, file, sqlite3.OPEN_READONLY | sqlite3.OPEN_FULLMUTEX);
  const close = async () => {
    await finalize();
    await closeDatabase(db);
  };
  try {
    db.configure("busyTimeout", timeoutMs);
    // Per connection, as the write connection's: pages read as memory, not one pread() each.
    await queryAll(db, `PRAGMA mmap_size = ${mmapBytes}`);
    return { statements: await compileReads(db, table, prepared), close };
  } catch (error) {
    await close();
    throw error;
  }
}
