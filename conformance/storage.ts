/**
 * The storage conformance cases: what a `PetStorage` must do for the core and for moving data
 * (export, import, migrate), as every backend of this package does it. A backend written elsewhere
 * proves itself with them: `open()` gives a new, empty store (its own namespace or file), which the
 * case closes.
 *
 * @example
 *   import { storageCases } from "petstore-lib/conformance";
 *   for (const c of storageCases()) test(c.name, () => c.run(() => myStorage({ namespace: fresh() })));
 */
import type { Pet } from "../lib/entries/schemas.ts";
import type { IdempotencyRecord, KeyRecord, PetStorage, StorageTransfer } from "../lib/entries/storage.ts";
import { assert } from "./assert.ts";

export interface StorageCase {
  name: string;
  /** Runs the case on stores `open` makes (each new and empty); rejects when the storage breaks a rule. */
  run(open: () => Promise<PetStorage>): Promise<void>;
}

const HOUR = 3_600_000;
const FINGERPRINT = "a".repeat(64);
const OTHER_PRINT = "b".repeat(64);

/** A key's record for `createOnce` at `now`, expiring an hour later. */
const keyOf = (key: string, now = Date.now(), fingerprint = FINGERPRINT): IdempotencyRecord => ({
  scope: "conformance",
  key,
  fingerprint,
  now,
  expiresAt: now + HOUR,
});

function transferOf(storage: PetStorage): StorageTransfer {
  assert.ok(storage.transfer !== undefined, "the storage has transfer calls (export, import)");
  return storage.transfer;
}

async function allKeys(transfer: StorageTransfer, now: number): Promise<KeyRecord[]> {
  const records: KeyRecord[] = [];
  for await (const batch of transfer.keys(now)) records.push(...batch);
  return records.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

const pet = (id: number, name: string, status: Pet["status"] = "available"): Pet => ({
  id,
  name,
  categoryId: 1,
  status,
});

const CASES: [string, (storage: PetStorage) => Promise<void>][] = [
  [
    "create assigns ascending ids; get and list give the pets as created",
    async (storage) => {
      const a = await storage.create({ name: "Rex", categoryId: 1, status: "available" });
      const b = await storage.create({ name: "Mia 🐈", categoryId: 2, status: "sold" });
      assert.ok(b.id > a.id, "ids ascend");
      assert.deepEqual(await storage.get(b.id), b);
      assert.deepEqual(await storage.list({ after: 0, limit: 10 }), [a, b]);
      assert.deepEqual(await storage.list({ status: "sold", after: 0, limit: 10 }), [b]);
    },
  ],
  [
    "transfer.nextId is above every id created, and takes none",
    async (storage) => {
      const transfer = transferOf(storage);
      assert.equal(await transfer.nextId(), 1, "a new store's next id");
      const created = await storage.create({ name: "Rex", categoryId: 1, status: "available" });
      const next = await transfer.nextId();
      assert.ok(next > created.id, "above the last id");
      assert.equal(await transfer.nextId(), next, "asking again takes no id");
      assert.equal((await storage.create({ name: "Max", categoryId: 1, status: "available" })).id, next);
    },
  ],
  [
    "transfer.putPets writes pets at their ids, in pages and status pages, and the next create takes a higher id",
    async (storage) => {
      const transfer = transferOf(storage);
      const pets = [pet(3, "Rex"), pet(7, "Mia", "sold"), pet(1000, "Max", "pending")];
      assert.deepEqual(await transfer.putPets(pets), { written: 3 });
      assert.deepEqual(await storage.get(7), pets[1]);
      assert.deepEqual(await storage.list({ after: 0, limit: 10 }), pets);
      assert.deepEqual(await storage.list({ status: "pending", after: 0, limit: 10 }), [pets[2]]);
      assert.ok((await transfer.nextId()) > 1000, "the sequence moved past the highest id");
      assert.ok((await storage.create({ name: "New", categoryId: 1, status: "available" })).id > 1000);
    },
  ],
  [
    "transfer.putPets leaves the same pet as it is, and refuses another pet at a taken id with nothing written",
    async (storage) => {
      const transfer = transferOf(storage);
      await transfer.putPets([pet(1, "Rex"), pet(2, "Mia")]);
      assert.deepEqual(await transfer.putPets([pet(1, "Rex"), pet(3, "Max")]), { written: 1 });
      assert.deepEqual(await transfer.putPets([pet(4, "New"), pet(2, "Not Mia")]), { conflict: 2 });
      assert.equal(await storage.get(4), undefined, "nothing of the refused batch is written");
      assert.deepEqual(await storage.get(2), pet(2, "Mia"));
    },
  ],
  [
    "transfer.advanceIds moves the sequence forward, never back",
    async (storage) => {
      const transfer = transferOf(storage);
      await transfer.advanceIds(50);
      assert.equal(await transfer.nextId(), 50);
      await transfer.advanceIds(10);
      assert.equal(await transfer.nextId(), 50, "never back");
      assert.equal((await storage.create({ name: "Rex", categoryId: 1, status: "available" })).id, 50);
    },
  ],
  [
    "transfer.keys gives every live key record once, not expired ones",
    async (storage) => {
      const transfer = transferOf(storage);
      if (storage.createOnce === undefined) return; // no keys to give
      const now = Date.now();
      const made = await storage.createOnce({ name: "Rex", categoryId: 1, status: "available" }, keyOf("k-live", now));
      assert.ok("pet" in made);
      const short = { ...keyOf("k-short", now), expiresAt: now + 60_000 };
      await storage.createOnce({ name: "Max", categoryId: 1, status: "available" }, short);
      const live = await allKeys(transfer, now);
      assert.deepEqual(
        live.map((r) => [r.key, r.petId, r.fingerprint, r.expiresAt]),
        [
          ["k-live", made.pet.id, FINGERPRINT, now + HOUR],
          ["k-short", made.pet.id + 1, FINGERPRINT, now + 60_000],
        ],
      );
      assert.deepEqual(
        (await allKeys(transfer, now + 120_000)).map((r) => r.key),
        ["k-live"],
        "a record expired by then is not given",
      );
    },
  ],
  [
    "transfer.putKeys writes records that replay their pet until they expire; a different live record is refused",
    async (storage) => {
      const transfer = transferOf(storage);
      if (storage.createOnce === undefined) return;
      const now = Date.now();
      await transfer.putPets([pet(5, "Rex")]);
      const record: KeyRecord = {
        scope: "conformance",
        key: "k-imported",
        fingerprint: FINGERPRINT,
        petId: 5,
        expiresAt: now + HOUR,
      };
      assert.deepEqual(await transfer.putKeys([record], now), { written: 1 });
      assert.deepEqual(await transfer.putKeys([record], now), { written: 0 }, "the same record is left as it is");
      const replay = await storage.createOnce(
        { name: "Rex", categoryId: 1, status: "available" },
        keyOf("k-imported", now),
      );
      assert.deepEqual(replay, { pet: pet(5, "Rex"), replayed: true });
      const reused = await storage.createOnce(
        { name: "Max", categoryId: 1, status: "available" },
        keyOf("k-imported", now, OTHER_PRINT),
      );
      assert.deepEqual(reused, { conflict: "reused" });
      const other = { ...record, key: "k-new" };
      const changed = { ...record, fingerprint: OTHER_PRINT };
      assert.deepEqual(await transfer.putKeys([other, changed], now), { conflict: changed });
      assert.deepEqual(
        (await allKeys(transfer, now)).map((r) => r.key),
        ["k-imported"],
        "nothing of the refused batch is written",
      );
      const later = now + 2 * HOUR;
      assert.deepEqual(
        await transfer.putKeys([{ ...changed, expiresAt: later + HOUR }], later),
        { written: 1 },
        "an expired record is replaced",
      );
    },
  ],
];

/**
 * The storage conformance cases, for any test runner: each opens the stores it needs with `open`
 * (a new, empty store each call) and closes them.
 */
export function storageCases(): StorageCase[] {
  return CASES.map(([name, body]) => ({
    name,
    async run(open) {
      const storage = await open();
      try {
        await body(storage);
      } finally {
        await storage.close();
      }
    },
  }));
}
