/**
 * SQLite keeps each pet's served text beside its index entry (`<table>_index.pet`) and pages read
 * it without Keyv's table: a create writes it, any write of a value by anyone else makes it stale
 * (NULL) so the value is read instead, and a file without the column (1.0, 1.1) gains it on open,
 * filled from the values that read as their pets.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import KeyvSqlite from "@keyv/sqlite";
import Keyv from "keyv";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Pet } from "../../../lib/schemas.ts";
import { requireFromDriver } from "../../../lib/storage/driver.ts";
import { InvalidRecordError } from "../../../lib/storage/failures.ts";
import type { PetStorage } from "../../../lib/storage/port.ts";
import { sqliteStorage } from "../../../lib/storage/sqlite/index.ts";

type Sqlite3 = typeof import("sqlite3");
type Row = Record<string, unknown>;

const s = suite("storage: sqlite served texts beside the index");
const dir = mkdtempSync(join(tmpdir(), "petstore-texts-"));
const sqlite3 = requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");
const opened: PetStorage[] = [];
s.after(async () => {
  for (const storage of opened) await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

let count = 0;
const newPath = () => join(dir, `pets-${++count}.db`);
async function open(path: string): Promise<PetStorage> {
  const storage = await sqliteStorage({ path });
  opened.push(storage);
  return storage;
}

/** Runs `sql` on a connection of its own to `path` (as another program would) and closes it. */
async function query(path: string, sql: string, params: unknown[] = []): Promise<Row[]> {
  const db = await new Promise<import("sqlite3").Database>((resolve, reject) => {
    const made = new sqlite3.Database(path, (error) => (error ? reject(error) : resolve(made)));
  });
  db.configure("busyTimeout", 5000);
  try {
    return await new Promise((resolve, reject) =>
      db.all(sql, params, (error, rows) => (error ? reject(error) : resolve(rows as Row[]))),
    );
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

/** Makes the file as 1.1 left it: no served texts, no triggers. */
async function dropPetTexts(path: string): Promise<void> {
  for (const trigger of await query(path, "SELECT name FROM sqlite_master WHERE type = 'trigger'")) {
    await query(path, `DROP TRIGGER ${String(trigger.name)}`);
  }
  await query(path, "ALTER TABLE petstore_index DROP COLUMN pet");
}

const texts = (path: string) => query(path, "SELECT id, pet FROM petstore_index ORDER BY id");
const keyvOn = (path: string) =>
  new Keyv({ store: new KeyvSqlite({ uri: `sqlite://${path}`, table: "petstore_values" }), namespace: "pets" });
const everything = { after: 0, limit: 100 };

s("a create writes the pet's served text beside its index entry: the contract's JSON of the pet", async () => {
  const path = newPath();
  const storage = await open(path);
  const a = await storage.create({ name: 'Rex "the dog" \\ 🐈', categoryId: 9007199254740991, status: "sold" });
  const b = await storage.create({ name: ":colon", categoryId: 2, status: "pending" });
  assert.equal(await texts(path), [
    { id: a.id, pet: JSON.stringify(a) },
    { id: b.id, pet: JSON.stringify(b) },
  ]);
  assert.equal(await storage.list(everything), [a, b]);
  assert.equal(await storage.list({ status: "pending", after: 0, limit: 10 }), [b]);
  assert.equal(await storage.get(a.id), a);
});

s(
  "a value rewritten or deleted through Keyv (another program) is what pages and gets serve, never the old text",
  async () => {
    const path = newPath();
    const storage = await open(path);
    const pets: Pet[] = [];
    for (let i = 0; i < 3; i++) pets.push(await storage.create({ name: `p${i}`, categoryId: 1, status: "available" }));
    const keyv = keyvOn(path);
    try {
      const renamed: Pet = { ...(pets[1] as Pet), name: "renamed elsewhere" };
      await keyv.set(String(renamed.id), renamed);
      const stale = await texts(path);
      assert.is(stale[1]?.pet, null, "the write made the served text stale");
      assert.is(stale[0]?.pet, JSON.stringify(pets[0]), "the other texts are kept");
      assert.equal(await storage.list(everything), [pets[0], renamed, pets[2]]);
      assert.equal(await storage.get(renamed.id), renamed);
      await keyv.delete(String((pets[2] as Pet).id));
      const failed = await Promise.resolve(storage.list(everything)).then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.instance(failed, InvalidRecordError, "an indexed pet without its value is an error");
      assert.equal(
        await storage.list({ ...everything, onInvalid: () => {} }),
        [pets[0], renamed],
        "a page that leaves bad records out serves the others",
      );
    } finally {
      await keyv.disconnect();
    }
  },
);

s("a page is handed over by the driver as one row, its pets in id order, a status page too", async () => {
  const path = newPath();
  const storage = await open(path);
  const pets: Pet[] = [];
  for (let i = 0; i < 7; i++) {
    pets.push(await storage.create({ name: `p${i}\u2028`, categoryId: i + 1, status: i % 2 ? "sold" : "available" }));
  }
  type All = (this: unknown, params: unknown, callback: (error: Error | null, rows: Row[]) => void) => unknown;
  const statement = sqlite3.Statement.prototype as unknown as { all: All };
  const all = statement.all;
  const handed: number[] = [];
  statement.all = function (params, callback) {
    return all.call(this, params, (error: Error | null, rows: Row[]) => {
      handed.push(rows?.length ?? -1);
      callback(error, rows);
    });
  };
  try {
    assert.equal(await storage.list({ after: 0, limit: 5 }), pets.slice(0, 5));
    assert.equal(await storage.list({ after: 5, limit: 5 }), pets.slice(5));
    assert.equal(await storage.list({ status: "sold", after: 1, limit: 2 }), [pets[1], pets[3]]);
    assert.equal(await storage.list({ after: 7, limit: 5 }), []);
  } finally {
    statement.all = all;
  }
  assert.equal(handed, [1, 1, 1, 1], "one call a page, one row each");
});

s("a served text with a line feed between its members (another program's) is read: its page, row by row", async () => {
  const path = newPath();
  const storage = await open(path);
  const pets: Pet[] = [];
  for (let i = 0; i < 3; i++) pets.push(await storage.create({ name: `p${i}`, categoryId: 1, status: "pending" }));
  const spaced = JSON.stringify(pets[1]).replaceAll(',"', ',\n"'); // still JSON of the same pet
  await query(path, "UPDATE petstore_index SET pet = ? WHERE id = ?", [spaced, (pets[1] as Pet).id]);
  assert.equal(await storage.list(everything), pets);
  assert.equal(await storage.list({ status: "pending", after: 0, limit: 2 }), pets.slice(0, 2));
  assert.equal(await storage.get((pets[1] as Pet).id), pets[1]);
});

s("a file whose index has no served texts (1.0, 1.1) gains the column on open, filled from Keyv's values", async () => {
  const path = newPath();
  const first = await open(path);
  const pets: Pet[] = [];
  for (const name of ["a", "b ✓", 'c "q"']) pets.push(await first.create({ name, categoryId: 3, status: "pending" }));
  await first.close();
  await dropPetTexts(path); // as 1.1 left it
  // A value with an expiry to come keeps no served text: Keyv, not the copy, decides when it is gone.
  const later = Date.now() + 3_600_000;
  await query(path, "UPDATE petstore_values SET value = ? WHERE key = 'pets:3'", [
    JSON.stringify({ value: pets[2], expires: later }),
  ]);
  const again = await open(path);
  assert.equal(await texts(path), [
    { id: 1, pet: JSON.stringify(pets[0]) },
    { id: 2, pet: JSON.stringify(pets[1]) },
    { id: 3, pet: null },
  ]);
  assert.equal(await again.list(everything), pets);
  const triggers = await query(path, "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name");
  assert.equal(
    triggers.map((t) => t.name),
    ["petstore_values_deleted", "petstore_values_inserted", "petstore_values_updated"],
  );
});

s("a file of more pets than one fill batch (500) without the column has every text filled on open", async () => {
  const path = newPath();
  await (await open(path)).close();
  await dropPetTexts(path);
  const n = 1201;
  const count = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n})`;
  await query(
    path,
    `${count} INSERT INTO petstore_values (key, value) SELECT 'pets:' || i, '{"value":{"id":' || i || ',"name":"p' || i || '","categoryId":1,"status":"sold"}}' FROM n`,
  );
  await query(path, `${count} INSERT INTO petstore_index (id, status) SELECT i, 'sold' FROM n`);
  const storage = await open(path);
  const filled = await texts(path);
  assert.is(filled.length, n);
  for (const [i, row] of filled.entries()) {
    assert.is(row.pet, JSON.stringify({ id: i + 1, name: `p${i + 1}`, categoryId: 1, status: "sold" }));
  }
  assert.equal(
    (await storage.list({ after: 1199, limit: 10 })).map((p) => p.name),
    ["p1200", "p1201"],
  );
});

s("two stores opening a file without the column together both open, and the column is added once", async () => {
  const path = newPath();
  const first = await open(path);
  await first.create({ name: "old", categoryId: 1, status: "sold" });
  await first.close();
  await dropPetTexts(path);
  const [a, b] = await Promise.all([open(path), open(path)]);
  const columns = await query(path, "PRAGMA table_info(petstore_index)");
  assert.equal(
    columns.map((c) => c.name),
    ["id", "status", "pet"],
  );
  assert.equal(
    (await a.list(everything)).map((p) => p.name),
    ["old"],
  );
  assert.equal(
    (await b.list(everything)).map((p) => p.name),
    ["old"],
  );
});

s("clear() empties the served texts with the index, and a page after it serves only new pets", async () => {
  const path = newPath();
  const storage = await open(path);
  await storage.create({ name: "before", categoryId: 1, status: "sold" });
  await storage.clear?.();
  assert.equal(await texts(path), []);
  const after = await storage.create({ name: "after", categoryId: 1, status: "sold" });
  assert.equal(await storage.list(everything), [after]);
});

s.run();
