/**
 * SQLite's write-ahead log does not keep the size it once grew to: WAL files are reused, not
 * shrunk, so one large write (a bulk load, a migration) would leave a log as large as the
 * database beside it for good. The storage bounds it (`PRAGMA journal_size_limit`, 64 MiB): the
 * next write after a checkpoint cuts it back.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { requireFromDriver } from "../../../lib/storage/driver.ts";
import { sqliteStorage } from "../../../lib/storage/sqlite/index.ts";

type Sqlite3 = typeof import("sqlite3");
type Database = import("sqlite3").Database;

const s = suite("storage: sqlite write-ahead log size");
const dir = mkdtempSync(join(tmpdir(), "petstore-wal-"));
s.after(() => rmSync(dir, { recursive: true, force: true }));

const LIMIT = 64 * 1024 * 1024;

const run = (db: Database, sql: string) =>
  new Promise<void>((resolve, reject) => db.exec(sql, (error) => (error ? reject(error) : resolve())));

s(
  "sqlite storage: a WAL grown past 64 MiB by one large write is cut back to at most 64 MiB by the next create",
  async () => {
    const path = join(dir, "pets.db");
    const store = await sqliteStorage({ path });
    try {
      await store.create({ name: "first", categoryId: 1, status: "available" });
      // Another connection (the driver under @keyv/sqlite) writes about 96 MiB in one transaction;
      // its commit checkpoints the log.
      const sqlite3 = requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");
      const other = await new Promise<Database>((resolve, reject) => {
        const db = new sqlite3.Database(path, (error) => (error ? reject(error) : resolve(db)));
      });
      try {
        await run(
          other,
          "CREATE TABLE scratch (b BLOB); " +
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 96) " +
            "INSERT INTO scratch SELECT randomblob(1024 * 1024) FROM n",
        );
      } finally {
        await new Promise<void>((resolve) => other.close(() => resolve()));
      }
      const grown = statSync(`${path}-wal`).size;
      assert.ok(grown > LIMIT, `the log grew past the limit first (${grown} bytes)`);

      const pet = await store.create({ name: "second", categoryId: 2, status: "sold" });
      const after = statSync(`${path}-wal`).size;
      assert.ok(after <= LIMIT, `the log was cut back to at most 64 MiB (${after} bytes, was ${grown})`);
      assert.equal(await store.get(pet.id), pet, "the create that cut it back is stored");
      assert.equal((await store.list({ status: undefined, after: 0, limit: 10 })).length, 2);
    } finally {
      await store.close();
    }
  },
);

s.run();
