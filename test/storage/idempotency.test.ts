/**
 * `createOnce`, the storage half of idempotent creates, on every backend: the pet and its key
 * record are written together or not at all, a key gives one pet whatever the concurrency, the
 * record expires by the caller's clock and is then removed, and the pet's value stays Keyv's.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { fingerprintOf } from "../../lib/idempotency.ts";
import type { Pet } from "../../lib/schemas.ts";
import type { CreateOnceResult, IdempotencyRecord, PetData, PetStorage } from "../../lib/storage/port.ts";
import { type Backend, backends } from "./backends.ts";
import { RUN } from "./services.ts";

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 26, 12);
const rex: PetData = { name: "Rex", categoryId: 1, status: "available" };

const mia2: PetData = { name: "Mia", categoryId: 2, status: "sold" };

function record(key: string, pet: PetData = rex, now = T0, scope = "caller-a", ttl = HOUR): IdempotencyRecord {
  return { scope, key, fingerprint: fingerprintOf(pet), now, expiresAt: now + ttl };
}

async function createOnce(storage: PetStorage, pet: PetData, rec: IdempotencyRecord): Promise<CreateOnceResult> {
  if (storage.createOnce === undefined) throw new Error(`${storage.kind} has no createOnce`);
  return storage.createOnce(pet, rec);
}

function created(result: CreateOnceResult): Pet {
  assert.ok("pet" in result, `expected a pet, got ${JSON.stringify(result)}`);
  return result.pet;
}

async function all(storage: PetStorage): Promise<Pet[]> {
  return storage.list({ after: 0, limit: 1000 });
}

function idempotency(backend: Backend): void {
  const s = suite(`storage idempotency: ${backend.name}`);
  const namespaces: string[] = [];
  const opened: PetStorage[] = [];
  let count = 0;
  const fresh = async () => {
    const ns = `${RUN}_${backend.name.slice(0, 2)}k${++count}`;
    namespaces.push(ns);
    const storage = await backend.open(ns, { operationTimeoutMs: 10_000 });
    opened.push(storage);
    return { storage, ns };
  };
  s.after(async () => {
    await Promise.all(opened.map((storage) => storage.close()));
    await backend.cleanup(namespaces);
  });

  s(
    `${backend.name}: the first use of a key creates the pet; the same key and fingerprint replay it, storing nothing`,
    async () => {
      const { storage } = await fresh();
      const first = await createOnce(storage, rex, record("k1"));
      assert.equal(first, { pet: { id: 1, ...rex }, replayed: false });
      const again = await createOnce(storage, rex, record("k1", rex, T0 + 1000));
      assert.equal(again, { pet: { id: 1, ...rex }, replayed: true });
      assert.equal(Object.keys((again as { pet: Pet }).pet), ["id", "name", "categoryId", "status"]);
      assert.equal(await all(storage), [{ id: 1, ...rex }]);
    },
  );

  s(`${backend.name}: the same key with another fingerprint is refused as reused, storing nothing`, async () => {
    const { storage } = await fresh();
    created(await createOnce(storage, rex, record("k1")));
    const mia: PetData = { name: "Mia", categoryId: 1, status: "available" };
    assert.equal(await createOnce(storage, mia, record("k1", mia)), { conflict: "reused" });
    assert.is((await all(storage)).length, 1);
  });

  s(`${backend.name}: another scope's identical key is another key`, async () => {
    const { storage } = await fresh();
    const a = created(await createOnce(storage, rex, record("k1", rex, T0, "caller-a")));
    const b = created(await createOnce(storage, rex, record("k1", rex, T0, "caller-b")));
    assert.is.not(a.id, b.id);
    // A scope and a key that concatenate alike are still two keys.
    const c = created(await createOnce(storage, rex, record("b:k1", rex, T0, "caller-a:")));
    const d = created(await createOnce(storage, rex, record("k1", rex, T0, "caller-a:b:")));
    assert.is((await all(storage)).length, 4);
    assert.is.not(c.id, d.id);
  });

  s(
    `${backend.name}: 50 concurrent creates with one key make one pet; the others replay it or are told in_use`,
    async () => {
      const { storage } = await fresh();
      const results = await Promise.all(Array.from({ length: 50 }, () => createOnce(storage, rex, record("same"))));
      const pets = results.filter((r): r is { pet: Pet; replayed: boolean } => "pet" in r);
      assert.is(pets.filter((r) => !r.replayed).length, 1, "exactly one creation");
      for (const r of results) {
        if ("conflict" in r) assert.is(r.conflict, "in_use");
        else assert.equal(r.pet, { id: 1, ...rex });
      }
      assert.equal(await all(storage), [{ id: 1, ...rex }]);
    },
  );

  s(`${backend.name}: creates with and without keys share one id sequence`, async () => {
    const { storage } = await fresh();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0 ? storage.create(rex) : createOnce(storage, rex, record(`k${i}`)).then(created),
      ),
    );
    const ids = results.map((p) => p.id).sort((x, y) => x - y);
    assert.equal(
      ids,
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
    assert.is((await all(storage)).length, 40);
  });

  s(`${backend.name}: after its expiry (by the caller's clock) the key is new again`, async () => {
    const { storage } = await fresh();
    const first = created(await createOnce(storage, rex, record("k1", rex, T0, "caller-a", HOUR)));
    const justBefore = await createOnce(storage, rex, record("k1", rex, T0 + HOUR - 1));
    assert.equal(justBefore, { pet: first, replayed: true });
    const mia: PetData = { name: "Mia", categoryId: 2, status: "sold" };
    // Expired: even another fingerprint is a first use now.
    const second = created(await createOnce(storage, mia, record("k1", mia, T0 + HOUR)));
    assert.is(second.id, first.id + 1);
    assert.equal(await createOnce(storage, mia, record("k1", mia, T0 + HOUR + 5)), { pet: second, replayed: true });
  });

  s(`${backend.name}: keys and scopes with quotes or SQL in them are keys like any other`, async () => {
    const { storage } = await fresh();
    // Scopes may hold any character but NUL (the core refuses it); keys are printable ASCII.
    const odd = ["it's", "''", "'); DROP TABLE x; --", "semi;colon", "é ü 🐈"];
    const pets: Pet[] = [];
    for (const key of odd) pets.push(created(await createOnce(storage, rex, record(key, rex, T0, `scope ${key}`))));
    assert.equal(
      pets.map((p) => p.id),
      [1, 2, 3, 4, 5],
    );
    for (const [i, key] of odd.entries()) {
      assert.equal(await createOnce(storage, rex, record(key, rex, T0 + 1, `scope ${key}`)), {
        pet: pets[i],
        replayed: true,
      });
      assert.equal(await createOnce(storage, mia2, record(key, mia2, T0 + 2, `scope ${key}`)), { conflict: "reused" });
    }
    assert.is((await all(storage)).length, 5);
  });

  if (backend.raw !== undefined) {
    const raw = backend.raw;

    s(`${backend.name}: the pet written by createOnce reads back through a Keyv of its own`, async () => {
      const { storage, ns } = await fresh();
      const odd: PetData = { name: ':colon "quoted" 🐈', categoryId: 9007199254740991, status: "pending" };
      const pet = created(await createOnce(storage, odd, record("k1", odd)));
      const keyv = await raw.keyv(ns);
      try {
        assert.equal(await keyv.get(String(pet.id)), pet);
      } finally {
        await keyv.disconnect();
      }
      assert.equal(await storage.get(pet.id), pet);
    });

    s(`${backend.name}: expired key records are removed from the backend`, async () => {
      const { storage, ns } = await fresh();
      for (let i = 0; i < 5; i++) created(await createOnce(storage, rex, record(`old${i}`, rex, T0, "a", 1000)));
      assert.is(await raw.keyRecords(ns), 5);
      if (raw.keyTtlMs !== undefined) {
        // Redis removes them itself: each record carries its expiry (PX).
        const ttl = await raw.keyTtlMs(ns);
        assert.ok(ttl !== undefined && ttl > 0 && ttl <= 1000, `PTTL ${ttl}`);
      } else {
        // A write a day later deletes the expired records (a batch at most once a minute).
        created(await createOnce(storage, rex, record("new", rex, T0 + 24 * HOUR)));
        assert.is(await raw.keyRecords(ns), 1);
      }
    });
  }

  s.run();
}

for (const backend of backends("idempotent creates")) idempotency(backend);
