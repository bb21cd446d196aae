/**
 * Several processes opening one new SQLite file at once (the standalone server's workers): the
 * switch to WAL reads the file, then asks for its write lock, and SQLite answers SQLITE_BUSY at
 * once, without the busy time-out, when another connection took that lock in between. The open
 * waits and tries again within the storage's time-out; past it, the error says so.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { StorageConfigError } from "../../../lib/storage/config-error.ts";
import { requireFromDriver } from "../../../lib/storage/driver.ts";
import { sqliteStorage } from "../../../lib/storage/sqlite/index.ts";

type Sqlite3 = typeof import("sqlite3");
type Database = import("sqlite3").Database;

const s = suite("storage: sqlite files opened by several processes at once");
const dir = mkdtempSync(join(tmpdir(), "petstore-open-race-"));
s.after(() => rmSync(dir, { recursive: true, force: true }));

const sqlite3 = () => requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");
const run = (db: Database, sql: string) =>
  new Promise<void>((resolve, reject) => db.exec(sql, (error) => (error ? reject(error) : resolve())));
const close = (db: Database) => new Promise<void>((resolve) => db.close(() => resolve()));

/**
 * A file as another process leaves it mid-start: still in rollback mode, Keyv's table made, and
 * that process holding the write lock (`BEGIN IMMEDIATE`), which it gives up after `holdMs`.
 */
async function lockedNewFile(name: string, holdMs: number): Promise<{ path: string; released: Promise<void> }> {
  const path = join(dir, name);
  const other = new (sqlite3().Database)(path);
  await run(other, "CREATE TABLE petstore_values(key VARCHAR(255) PRIMARY KEY, value TEXT )");
  await run(other, "BEGIN IMMEDIATE");
  const released = new Promise<void>((resolve) => setTimeout(resolve, holdMs))
    .then(() => run(other, "COMMIT"))
    .then(() => close(other));
  return { path, released };
}

s(
  "sqlite storage: a write lock taken while the file switches to WAL is waited for, not an open that fails",
  async () => {
    const { path, released } = await lockedNewFile("held-briefly.db", 300);
    const started = Date.now();
    const storage = await sqliteStorage({ path, operationTimeoutMs: 5000 });
    try {
      assert.ok(Date.now() - started >= 250, "the open waited for the lock");
      const pet = await storage.create({ name: "Rex", categoryId: 1, status: "available" });
      assert.equal(await storage.get(pet.id), pet);
    } finally {
      await storage.close();
      await released;
    }
  },
);

s(
  "sqlite storage: a write lock held past the time-out fails the open after the time-out, saying it is locked",
  async () => {
    const { path, released } = await lockedNewFile("held-long.db", 1500);
    const started = Date.now();
    try {
      await sqliteStorage({ path, operationTimeoutMs: 400 });
      assert.unreachable("the open should fail");
    } catch (error) {
      assert.instance(error, StorageConfigError);
      assert.match((error as Error).message, /SQLITE_BUSY|locked/);
      const waited = Date.now() - started;
      assert.ok(waited >= 350 && waited < 1400, `failed after ${waited} ms, the time-out being 400`);
    } finally {
      await released;
    }
  },
);

/** A child that opens `path` on "go", creates a pet, closes, and prints "ok" or "fail <message>". */
const CHILD = `
import { once } from "node:events";
import { sqliteStorage } from ${JSON.stringify(new URL("../../../lib/storage/sqlite/index.ts", import.meta.url).href)};
process.stdout.write("ready\\n");
process.stdin.setEncoding("utf8");
let input = "";
while (!input.includes("go")) input += (await once(process.stdin, "data"))[0];
process.stdin.pause();
try {
  const storage = await sqliteStorage({ path: process.argv[1] });
  await storage.create({ name: "x", categoryId: 1, status: "available" });
  await storage.close();
  process.stdout.write("ok\\n");
} catch (error) {
  process.stdout.write("fail " + error.message + "\\n");
}
`;

s("sqlite storage: six processes opening one new file at the same moment all open it, three times over", async () => {
  for (let round = 0; round < 3; round++) {
    const path = join(dir, `together-${round}.db`);
    const children = Array.from({ length: 6 }, () =>
      spawn(process.execPath, ["--import", "tsx", "--input-type=module", "--eval", CHILD, path], {
        stdio: ["pipe", "pipe", "inherit"],
      }),
    );
    const outputs = children.map((child) => {
      let text = "";
      child.stdout.on("data", (chunk) => {
        text += chunk;
      });
      return () => text;
    });
    const exited = children.map((child) => new Promise((resolve) => child.on("exit", resolve)));
    while (!outputs.every((output) => output().includes("ready"))) await new Promise((r) => setTimeout(r, 10));
    for (const child of children) child.stdin.end("go\n");
    await Promise.all(exited);
    for (const output of outputs) assert.is(output().trim().split("\n").pop(), "ok", `round ${round}: ${output()}`);
    const storage = await sqliteStorage({ path });
    try {
      assert.is((await storage.list({ after: 0, limit: 100 })).length, 6, "each process's pet is there");
    } finally {
      await storage.close();
    }
  }
});

s.run();
