/**
 * SQLite under a lock held by another process: writes answer 503 storage_unavailable once the
 * busy time-out has passed (never a hang or a 500), reads go on (WAL), and writes work again
 * as soon as the lock is released.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PetStore } from "../../../lib/index.ts";
import { requireFromDriver } from "../../../lib/storage/driver.ts";
import type { PetStorage } from "../../../lib/storage/port.ts";
import { sqliteStorage } from "../../../lib/storage/sqlite/index.ts";
import { call, errorOf, json, makeStore } from "../../support/helpers.ts";
import { settles } from "../outage.ts";

type Sqlite3 = typeof import("sqlite3");

const s = suite("storage outage: sqlite lock");
const dir = mkdtempSync(join(tmpdir(), "petstore-lock-"));
const path = join(dir, "pets.db");
let storage: PetStorage | undefined;
let store: PetStore;
let other: import("sqlite3").Database | undefined;

const exec = (sql: string) =>
  new Promise<void>((resolve, reject) => other?.exec(sql, (error) => (error ? reject(error) : resolve())));

s.before(async () => {
  // The busy time-out (500 ms) is shorter than the core's (2 s): the 503 comes from SQLite's SQLITE_BUSY.
  storage = await sqliteStorage({ path, operationTimeoutMs: 500 });
  store = makeStore({ storage, operationTimeoutMs: 2000 });
  const sqlite3 = requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");
  other = new sqlite3.Database(path);
});

s.after(async () => {
  await store?.close();
  const db = other;
  if (db) await new Promise<void>((resolve) => db.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

s(
  "sqlite: a write lock held elsewhere past the busy time-out gives 503 on create; reads go on; released, creates work",
  async () => {
    const first = await call(store, "POST", "/v1/pets", { body: JSON.stringify({ name: "Rex", categoryId: 1 }) });
    assert.is(first.status, 201);
    await exec("BEGIN EXCLUSIVE");
    try {
      const blocked = await call(store, "POST", "/v1/pets", {
        body: JSON.stringify({ name: "Blocked", categoryId: 1 }),
      });
      assert.is(blocked.status, 503);
      assert.is(errorOf(blocked).code, "storage_unavailable");
      assert.ok(storage);
      assert.is(await settles(storage.create({ name: "x", categoryId: 1, status: "sold" }), 5000), "rejected");
      const list = await call(store, "GET", "/v1/pets");
      assert.is(list.status, 200);
      assert.equal(
        (json(list) as { name: string }[]).map((p) => p.name),
        ["Rex"],
      );
    } finally {
      await exec("COMMIT");
    }
    const after = await call(store, "POST", "/v1/pets", { body: JSON.stringify({ name: "After", categoryId: 1 }) });
    assert.is(after.status, 201);
    const list = await call(store, "GET", "/v1/pets");
    assert.equal(
      (json(list) as { name: string }[]).map((p) => p.name),
      ["Rex", "After"],
    );
  },
);

s.run();
