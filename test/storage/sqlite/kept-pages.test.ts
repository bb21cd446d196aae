/**
 * A SQLite page read again from the very same text is not decoded again (lib/storage/sqlite/kept-pages.ts):
 * its pets are handed out as new copies, a page whose text changed is read as it is now, and a page
 * holding a Keyv value (which may expire while its text stays the same) is never kept.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Pet } from "../../../lib/schemas.ts";
import { requireFromDriver } from "../../../lib/storage/driver.ts";
import { InvalidRecordError } from "../../../lib/storage/failures.ts";
import type { PetStorage } from "../../../lib/storage/port.ts";
import { sqliteStorage } from "../../../lib/storage/sqlite/index.ts";
import { makeKeptPages } from "../../../lib/storage/sqlite/kept-pages.ts";

type Sqlite3 = typeof import("sqlite3");

const s = suite("storage: sqlite pages kept by their text");
const dir = mkdtempSync(join(tmpdir(), "petstore-kept-"));
const sqlite3 = requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");
const opened: PetStorage[] = [];
s.after(async () => {
  for (const storage of opened) await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

let count = 0;
async function open(): Promise<{ storage: PetStorage; path: string }> {
  const path = join(dir, `pets-${++count}.db`);
  const storage = await sqliteStorage({ path });
  opened.push(storage);
  return { storage, path };
}

/** Runs `sql` on a connection of its own to `path`, as another program would. */
async function run(path: string, sql: string, params: unknown[] = []): Promise<void> {
  const db = await new Promise<import("sqlite3").Database>((resolve, reject) => {
    const made = new sqlite3.Database(path, (error) => (error ? reject(error) : resolve(made)));
  });
  db.configure("busyTimeout", 5000);
  try {
    await new Promise<void>((resolve, reject) => db.run(sql, params, (error) => (error ? reject(error) : resolve())));
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

const rex: Pet = { id: 1, name: "Rex", categoryId: 1, status: "sold" };
const mia: Pet = { id: 2, name: "Mia", categoryId: 2, status: "sold" };

s("a page is found by filter, cursor, limit and the very same text; it gives new copies each time", () => {
  const pages = makeKeptPages();
  const given = [{ ...rex }, { ...mia }];
  pages.keep(undefined, 0, 3, "text", given);
  given[0] = { ...mia }; // the caller's array and pets are not what is kept
  const found = pages.find(undefined, 0, 3, "text");
  assert.equal(found, [rex, mia]);
  (found as Pet[])[0] = mia;
  ((pages.find(undefined, 0, 3, "text") as Pet[])[1] as Pet).name = "changed";
  assert.equal(pages.find(undefined, 0, 3, "text"), [rex, mia], "a caller's changes are its own");
  assert.is(pages.find(undefined, 0, 3, "other text"), undefined);
  assert.is(pages.find(undefined, 0, 4, "text"), undefined, "another limit");
  assert.is(pages.find(undefined, 1, 3, "text"), undefined, "another cursor");
  assert.is(pages.find("sold", 0, 3, "text"), undefined, "another filter");
});

s("at most 256 pages are kept: then all are forgotten at once", () => {
  const pages = makeKeptPages();
  for (let after = 0; after < 256; after++) pages.keep("sold", after, 1, `t${after}`, [rex]);
  assert.equal(pages.find("sold", 0, 1, "t0"), [rex]);
  pages.keep("sold", 999, 1, "t999", [mia]);
  assert.is(pages.find("sold", 0, 1, "t0"), undefined, "forgotten");
  assert.equal(pages.find("sold", 999, 1, "t999"), [mia]);
});

s("a page read twice is equal and not the same objects; a pet changed in the file is read as it is now", async () => {
  const { storage, path } = await open();
  await storage.create({ name: "Rex", categoryId: 1, status: "sold" });
  await storage.create({ name: "Mia", categoryId: 2, status: "sold" });
  const first = await storage.list({ after: 0, limit: 10 });
  (first[0] as Pet).name = "mine";
  const second = await storage.list({ after: 0, limit: 10 });
  assert.equal(second, [rex, mia]);
  assert.is.not(second[1], first[1]);
  await run(path, "UPDATE petstore_values SET value = ? WHERE key = 'pets:2'", [
    JSON.stringify({ value: { ...mia, name: "Mia II" } }),
  ]);
  assert.equal(await storage.list({ after: 0, limit: 10 }), [rex, { ...mia, name: "Mia II" }]);
});

s("a page holding a value that expires is read again each time: once it expired, its record is missing", async () => {
  const { storage, path } = await open();
  await storage.create({ name: "Rex", categoryId: 1, status: "sold" });
  await storage.create({ name: "Mia", categoryId: 2, status: "sold" });
  const expires = Date.now() + 400;
  await run(path, "UPDATE petstore_values SET value = ? WHERE key = 'pets:2'", [
    JSON.stringify({ value: mia, expires }),
  ]);
  assert.equal(await storage.list({ after: 0, limit: 10 }), [rex, mia]);
  assert.equal(await storage.list({ after: 0, limit: 10 }), [rex, mia]);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, expires - Date.now()) + 50));
  // An indexed pet whose value Keyv no longer gives is a missing record, not a pet kept from before.
  const error = await Promise.resolve()
    .then(() => storage.list({ after: 0, limit: 10 }))
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  assert.instance(error, InvalidRecordError);
  assert.is((error as InvalidRecordError).key, "pets:2");
});

s.run();
