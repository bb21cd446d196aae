/**
 * SQLite reads see only committed pets: a create (or clear()) is held inside its transaction (the
 * driver's `exec` is wrapped: the last call runs without its COMMIT and waits), reads run
 * meanwhile, then the COMMIT fails (or succeeds). On a file, reads answer from the last commit; on
 * `:memory:`, they wait for the transaction to end. Also: close() closes the read connection too.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { fingerprintOf } from "../../../lib/idempotency.ts";
import { requireFromDriver } from "../../../lib/storage/driver.ts";
import type { IdempotencyRecord, PetData, PetStorage } from "../../../lib/storage/port.ts";
import { sqliteStorage } from "../../../lib/storage/sqlite/index.ts";
import { settles } from "../outage.ts";

type Sqlite3 = typeof import("sqlite3");
type Database = import("sqlite3").Database;
type Exec = (this: Database, sql: string, callback?: (error: Error | null) => void) => Database;

const s = suite("storage: sqlite reads see only committed pets");
const dir = mkdtempSync(join(tmpdir(), "petstore-reads-"));
const sqlite3 = requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");
const prototype = sqlite3.Database.prototype as unknown as { exec: Exec };
const originalExec = prototype.exec;
const opened: PetStorage[] = [];
/** Releases the create a test holds, even when the test fails first (close() waits for it). */
let releaseHeld = () => {};

s.after.each(() => {
  prototype.exec = originalExec;
  releaseHeld();
});
s.after(async () => {
  for (const storage of opened) await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 26, 12);
const rex: PetData = { name: "Rex", categoryId: 1, status: "available" };
const mia: PetData = { name: "Mia", categoryId: 2, status: "available" };
const record = (key: string, pet: PetData, now: number): IdempotencyRecord => ({
  scope: "caller-a",
  key,
  fingerprint: fingerprintOf(pet),
  now,
  expiresAt: now + HOUR,
});
const everything = { after: 0, limit: 100 };

let count = 0;
async function open(path = join(dir, `pets-${++count}.db`)): Promise<PetStorage> {
  const storage = await sqliteStorage({ path });
  opened.push(storage);
  return storage;
}

/**
 * Holds the next create that reaches its COMMIT: its last `exec` runs without the COMMIT and the
 * transaction stays open until `release()`; then it commits, or rolls back and fails as a failed
 * COMMIT does. An `exec` that fails before (a key that has a record) is passed on as it is.
 */
function holdNextCommit(end: "commit" | "fail") {
  let reach = () => {};
  const held = new Promise<void>((resolve) => {
    reach = resolve;
  });
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  releaseHeld = release;
  prototype.exec = function holdCommit(this: Database, sql, callback) {
    if (!sql.endsWith(";COMMIT")) return originalExec.call(this, sql, callback);
    return originalExec.call(this, sql.slice(0, -"COMMIT".length), (error) => {
      if (error) return callback?.(error);
      prototype.exec = originalExec;
      reach();
      void released.then(() =>
        originalExec.call(this, end === "commit" ? "COMMIT" : "ROLLBACK", (failure) =>
          callback?.(end === "commit" ? failure : new Error("SQLITE_IOERR: disk I/O error (a failed COMMIT)")),
        ),
      );
    });
  };
  return { held: within(held, "the create reached its COMMIT"), release };
}

/** `promise`, its rejection heard now (a test that fails first leaves it unawaited). */
function started<T>(promise: Promise<T> | T | undefined): Promise<T | undefined> {
  const settled = Promise.resolve(promise);
  settled.catch(() => {});
  return settled;
}

/** `promise`, or a failure naming `what` after 10 s (a hang guard, not a timing assertion). */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  assert.is(await settles(promise, 10_000), "resolved", what);
  return promise;
}

/** What every read of the store answers now. */
async function readAll(storage: PetStorage, ids: number[]) {
  return {
    pets: await Promise.all(ids.map((id) => storage.get(id))),
    all: await storage.list(everything),
    available: await storage.list({ status: "available", ...everything }),
  };
}

s("sqlite: a pet whose COMMIT fails is never visible to a concurrent get or list", async () => {
  const storage = await open();
  const first = await storage.create(rex);
  const hold = holdNextCommit("fail");
  const creating = started(storage.create(mia));
  await hold.held;
  assert.equal(await readAll(storage, [1, 2]), { pets: [first, undefined], all: [first], available: [first] });
  hold.release();
  assert.is(await settles(creating, 10_000), "rejected", "the create fails with its COMMIT");
  assert.equal(await readAll(storage, [1, 2]), { pets: [first, undefined], all: [first], available: [first] });
  const next = await storage.create(mia);
  assert.equal(next, { id: 2, ...mia }, "the failed create took no id");
  assert.equal(await storage.list(everything), [first, next]);
});

s("sqlite: a pet is visible to get, list and findOnce only once its COMMIT is done", async () => {
  const storage = await open();
  const hold = holdNextCommit("commit");
  const creating = started(storage.createOnce?.(rex, record("k", rex, T0)));
  await hold.held;
  assert.equal(await readAll(storage, [1]), { pets: [undefined], all: [], available: [] });
  assert.is(await storage.findOnce?.(record("k", rex, T0)), undefined);
  hold.release();
  const pet = { id: 1, ...rex };
  assert.equal(await within(creating, "the create ends"), { pet, replayed: false });
  assert.equal(await readAll(storage, [1]), { pets: [pet], all: [pet], available: [pet] });
  assert.equal(await storage.findOnce?.(record("k", rex, T0 + 1)), { pet, replayed: true });
});

s(
  "sqlite: an expired key's record claimed by a create is not seen by a concurrent findOnce, get or list until it commits, and never when its COMMIT fails",
  async () => {
    const storage = await open();
    const first = (await storage.createOnce?.(rex, record("k", rex, T0))) as { pet: object };
    const later = T0 + 2 * HOUR; // the key's record has expired by then
    for (const end of ["fail", "commit"] as const) {
      const hold = holdNextCommit(end);
      const claiming = started(storage.createOnce?.(mia, record("k", mia, later)));
      await hold.held;
      // The committed record (Rex's, live before its expiry) is the one read, not the claim.
      assert.equal(await storage.findOnce?.(record("k", rex, T0 + 1)), { pet: first.pet, replayed: true }, end);
      assert.is(await storage.findOnce?.(record("k", mia, later)), undefined, end);
      assert.equal(await readAll(storage, [1, 2]), {
        pets: [first.pet, undefined],
        all: [first.pet],
        available: [first.pet],
      });
      hold.release();
      if (end === "fail") {
        assert.is(await settles(claiming, 10_000), "rejected", "the claim fails with its COMMIT");
        assert.equal(await storage.findOnce?.(record("k", rex, T0 + 1)), { pet: first.pet, replayed: true });
        assert.is(await storage.findOnce?.(record("k", mia, later)), undefined);
        assert.equal(await storage.list(everything), [first.pet]);
      } else {
        const pet = { id: 2, ...mia };
        assert.equal(await within(claiming, "the claim ends"), { pet, replayed: false });
        assert.equal(await storage.findOnce?.(record("k", mia, later + 1)), { pet, replayed: true });
        assert.equal(await storage.list(everything), [first.pet, pet]);
      }
    }
  },
);

s(
  "sqlite (:memory:): reads wait for a create's transaction to end, so a pet whose COMMIT fails is never seen",
  async () => {
    const storage = await open(":memory:");
    const first = await storage.create(rex);
    const hold = holdNextCommit("fail");
    const creating = started(storage.create(mia));
    await hold.held;
    const reading = readAll(storage, [1, 2]);
    assert.is(await settles(reading, 200), "hung", "the reads wait while the transaction is open");
    hold.release();
    assert.is(await settles(creating, 10_000), "rejected");
    assert.equal(await within(reading, "the reads end"), {
      pets: [first, undefined],
      all: [first],
      available: [first],
    });
    assert.equal(await storage.create(mia), { id: 2, ...mia });
  },
);

s("sqlite: a read during clear() sees every pet or none, never part of them", async () => {
  const storage = await open();
  const first = (await storage.createOnce?.(rex, record("k", rex, T0))) as { pet: object };
  const second = await storage.create(mia);
  for (const end of ["fail", "commit"] as const) {
    const hold = holdNextCommit(end);
    const clearing = started(storage.clear?.());
    await hold.held;
    assert.equal(await readAll(storage, [1, 2]), {
      pets: [first.pet, second],
      all: [first.pet, second],
      available: [first.pet, second],
    });
    assert.equal(await storage.findOnce?.(record("k", rex, T0 + 1)), { pet: first.pet, replayed: true });
    hold.release();
    assert.is(await settles(clearing, 10_000), end === "fail" ? "rejected" : "resolved");
  }
  assert.equal(await readAll(storage, [1, 2]), { pets: [undefined, undefined], all: [], available: [] });
  assert.is(await storage.findOnce?.(record("k", rex, T0 + 1)), undefined);
});

s("sqlite: close() lets the reads in flight finish and closes every connection of the store", async () => {
  const path = join(dir, "close.db");
  const storage = await sqliteStorage({ path });
  for (let i = 0; i < 50; i++) await storage.create(rex);
  const reads = [storage.list(everything), storage.get(7), storage.findOnce?.(record("none", rex, T0))];
  const closed = storage.close();
  const [page, pet, found] = await within(Promise.all(reads), "the reads end");
  assert.is((page as unknown[]).length, 50);
  assert.equal(pet, { id: 7, ...rex });
  assert.is(found, undefined);
  await within(closed, "close() ends");
  await within(storage.close(), "close() again ends");
  // The last connection to close checkpoints the log and removes it: none is left open.
  assert.not.ok(existsSync(`${path}-wal`), "no connection is left open on the file");
  const refused = await Promise.resolve(storage.get(1)).catch((error: unknown) => error);
  assert.match(String(refused), /the store is closed/);
});

s.run();
