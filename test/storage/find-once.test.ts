/**
 * `findOnce`, the look-up a keyed create makes before the business rules, on every backend: it
 * writes nothing, finds the replay (or the reused key) that `createOnce` would answer, forgets an
 * expired record; and through the store, a replayed keyed create runs neither rule again.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Pet } from "../../lib/entries/schemas.ts";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { fingerprintOf } from "../../lib/idempotency.ts";
import { createPetStore, isPetStoreError, RuleViolation } from "../../lib/index.ts";
import type { IdempotencyRecord, PetData } from "../../lib/storage/port.ts";
import { type Backend, backends } from "./backends.ts";
import { RUN } from "./services.ts";

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 26, 12);
const rex: PetData = { name: "Rex", categoryId: 1, status: "available" };
const record = (key: string, pet: PetData = rex, now = T0): IdempotencyRecord => ({
  scope: "caller-a",
  key,
  fingerprint: fingerprintOf(pet),
  now,
  expiresAt: now + HOUR,
});

function findOnceOn(backend: Backend): void {
  const s = suite(`storage findOnce: ${backend.name}`);
  const namespaces: string[] = [];
  const opened: PetStorage[] = [];
  let count = 0;
  const fresh = async () => {
    const ns = `${RUN}_${backend.name.slice(0, 2)}f${++count}`;
    namespaces.push(ns);
    const storage = await backend.open(ns, { operationTimeoutMs: 10_000 });
    opened.push(storage);
    return storage;
  };
  s.after(async () => {
    await Promise.all(opened.map((storage) => storage.close()));
    await backend.cleanup(namespaces);
  });

  s(
    `${backend.name}: a free key is undefined; a used one is its replay, or reused for another pet; nothing written`,
    async () => {
      const storage = await fresh();
      const { findOnce, createOnce } = storage;
      assert.ok(findOnce && createOnce);
      assert.is(await findOnce.call(storage, record("k1")), undefined);
      await createOnce.call(storage, rex, record("k1"));
      assert.equal(await findOnce.call(storage, record("k1", rex, T0 + 1000)), {
        pet: { id: 1, ...rex },
        replayed: true,
      });
      const mia: PetData = { name: "Mia", categoryId: 2, status: "sold" };
      assert.equal(await findOnce.call(storage, record("k1", mia)), { conflict: "reused" });
      assert.equal(await storage.list({ after: 0, limit: 10 }), [{ id: 1, ...rex }]);
    },
  );

  s(`${backend.name}: an expired record is not found`, async () => {
    const storage = await fresh();
    await storage.createOnce?.(rex, record("k2"));
    assert.is(await storage.findOnce?.(record("k2", rex, T0 + HOUR + 1)), undefined);
  });

  s(`${backend.name}: a replayed keyed create runs neither rule again; a reused key runs none either`, async () => {
    const storage = await fresh();
    const before: string[] = [];
    const after: Pet[] = [];
    const store = createPetStore({
      auth: ["k"],
      storage,
      onError: () => {},
      rules: {
        beforeCreate: (pet) => {
          before.push(pet.name);
          if (pet.categoryId === 9) throw new RuleViolation("unknown_category", "No category 9.");
        },
        afterCreate: (pet) => {
          after.push(pet);
        },
      },
    });
    const first = await store.createPet({ name: "Rex", categoryId: 1 }, { idempotencyKey: "order-1" });
    const again = await store.createPet({ name: "Rex", categoryId: 1 }, { idempotencyKey: "order-1" });
    assert.equal(again, { pet: first.pet, replayed: true });
    const reused = await store.createPet({ name: "Mia", categoryId: 9 }, { idempotencyKey: "order-1" }).catch((e) => e);
    assert.ok(isPetStoreError(reused, "idempotency_key_reused"), String(reused));
    assert.equal(before, ["Rex"]);
    assert.equal(after, [first.pet]);
  });

  s.run();
}

for (const backend of backends("storage findOnce")) findOnceOn(backend);
