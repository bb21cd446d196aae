/**
 * lib/storage/guarded-transfer.ts: moving data calls the storage through a guard as requests do:
 * a call that hangs ends in a time-out (`storage_unavailable`), a bad record is an invalid record
 * naming its key, any other error `storage_unavailable` with it as cause, each step of the key
 * records' walk included.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { memoryStorage } from "../../lib/entries/storage.ts";
import { isPetStoreError } from "../../lib/index.ts";
import { InvalidRecordError, invalidRecordOf } from "../../lib/storage/failures.ts";
import { guardTransfer } from "../../lib/storage/guarded-transfer.ts";
import type { PetStorage, StorageTransfer } from "../../lib/storage/port.ts";

/** Memory storage whose transfer calls are replaced by `calls`. */
function storageWith(calls: Partial<StorageTransfer>, list?: PetStorage["list"]): PetStorage {
  const storage = memoryStorage();
  return {
    ...storage,
    list: list ?? storage.list,
    transfer: { ...(storage.transfer as StorageTransfer), ...calls },
  };
}

const rejection = async (promise: Promise<unknown>) =>
  promise.then(
    () => assert.unreachable("resolved"),
    (e) => e,
  );

test("a transfer call that hangs ends at the guard's time-out as storage_unavailable", async () => {
  const { transfer } = guardTransfer(storageWith({ nextId: () => new Promise(() => {}) }), 50);
  const started = performance.now();
  const error = await rejection(transfer.nextId());
  assert.ok(isPetStoreError(error, "storage_unavailable"), String(error));
  assert.match(String((error as Error).cause), /no answer within 50 ms/);
  assert.ok(performance.now() - started < 1000);
});

test("a step of the key records' walk that hangs ends the same way", async () => {
  async function* stuck() {
    yield [];
    await new Promise(() => {});
  }
  const { transfer } = guardTransfer(storageWith({ keys: () => stuck() }), 50);
  const error = await rejection(
    (async () => {
      for await (const _ of transfer.keys(Date.now())) {
      }
    })(),
  );
  assert.ok(isPetStoreError(error, "storage_unavailable"), String(error));
});

test("a bad record met while moving data is an invalid record naming its key; any other error is storage_unavailable with it as cause", async () => {
  const bad = new InvalidRecordError("redis", "shop::7", "not valid JSON");
  const pages = guardTransfer(
    storageWith({}, () => {
      throw bad;
    }),
  );
  const error = await rejection(pages.list({ after: 0, limit: 10 }));
  assert.is(invalidRecordOf(error), bad);
  const down = new TypeError("fetch failed");
  const writes = guardTransfer(storageWith({ putPets: () => Promise.reject(down) }));
  const failed = await rejection(writes.transfer.putPets([{ id: 1, name: "Rex", categoryId: 1, status: "sold" }]));
  assert.ok(isPetStoreError(failed, "storage_unavailable"));
  assert.is((failed as Error).cause, down);
});

test("a storage without transfer calls is refused with a clear error", () => {
  const { transfer: _, ...plain } = memoryStorage();
  assert.throws(() => guardTransfer(plain as PetStorage), /cannot export or import/);
});

test.run();
