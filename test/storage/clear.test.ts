/**
 * `clear()` on every backend (what the test kit's `reset()` calls): it removes this store's pets,
 * index, sequence and any other record under its own namespace or tables, and nothing of another
 * store sharing the backend, even one whose namespace starts with the same characters.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createPetStore } from "../../lib/index.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import { backends } from "./backends.ts";
import { RUN } from "./services.ts";

const s = suite("storage: clear()");
const opened: PetStorage[] = [];
const cleanups: (() => Promise<void>)[] = [];

s.after(async () => {
  for (const storage of opened) await storage.close();
  for (const cleanup of cleanups) await cleanup();
});

for (const backend of backends("clear()")) {
  const mine = `${RUN}clr`;
  // The neighbour's namespace starts with ours: a prefix match would take its data too.
  const neighbour = `${RUN}clr_x`;
  cleanups.push(() => backend.cleanup([mine, neighbour]));

  s(
    `${backend.name}: clear() empties the store and restarts ids at 1; a neighbour namespace keeps its pets and its sequence`,
    async () => {
      const store = await backend.open(mine);
      const other = await backend.open(neighbour);
      opened.push(store, other);
      for (const name of ["a", "b", "c"]) await store.create({ name, categoryId: 1, status: "sold" });
      for (const name of ["x", "y"]) await other.create({ name, categoryId: 2, status: "available" });

      assert.type(store.clear, "function");
      await store.clear?.();

      assert.equal(await store.list({ after: 0, limit: 10 }), []);
      assert.equal(await store.list({ status: "sold", after: 0, limit: 10 }), []);
      assert.is(await store.get(1), undefined);
      assert.equal(await store.create({ name: "again", categoryId: 3, status: "pending" }), {
        id: 1,
        name: "again",
        categoryId: 3,
        status: "pending",
      });
      assert.equal(await store.list({ status: "pending", after: 0, limit: 10 }), [
        { id: 1, name: "again", categoryId: 3, status: "pending" },
      ]);

      assert.equal(
        (await other.list({ after: 0, limit: 10 })).map((p) => p.name),
        ["x", "y"],
      );
      assert.is((await other.create({ name: "z", categoryId: 2, status: "available" })).id, 3);
    },
  );

  s(
    `${backend.name}: after clear(), the store serves the pets created since, never the text of an earlier pet with the same id`,
    async () => {
      const ns = `${RUN}clrt`;
      cleanups.push(() => backend.cleanup([ns]));
      const storage = await backend.open(ns);
      opened.push(storage);
      const store = createPetStore({ storage, auth: ["k"] });
      const get = async (path: string) =>
        (await store.handle({ method: "GET", path, headers: { authorization: "Bearer k" } })).body;
      await store.createPet({ name: "Alpha", categoryId: 1, status: "sold" });
      // Served twice: the second answer is the one a cache of pet texts would give.
      for (let i = 0; i < 2; i++) {
        assert.equal(JSON.parse(await get("/v1/pets")), [{ id: 1, name: "Alpha", categoryId: 1, status: "sold" }]);
        assert.equal(JSON.parse(await get("/v1/pets/1")), { id: 1, name: "Alpha", categoryId: 1, status: "sold" });
      }
      await storage.clear?.();
      await store.createPet({ name: "Bravo", categoryId: 2, status: "pending" });
      const bravo = { id: 1, name: "Bravo", categoryId: 2, status: "pending" };
      assert.equal(JSON.parse(await get("/v1/pets")), [bravo]);
      assert.equal(JSON.parse(await get("/v1/pets?status=pending")), [bravo]);
      assert.equal(JSON.parse(await get("/v1/pets/1")), bravo);
    },
  );

  if (backend.raw !== undefined) {
    const raw = backend.raw;
    s(
      `${backend.name}: clear() also removes records of other kinds under the store's namespace (idempotency records), not a neighbour's`,
      async () => {
        const ns = `${RUN}clrr`;
        const next = `${RUN}clrr_x`;
        cleanups.push(() => backend.cleanup([ns, next]));
        const store = await backend.open(ns);
        const other = await backend.open(next);
        opened.push(store, other);
        await raw.plantRecord(ns);
        await raw.plantRecord(next);
        await store.clear?.();
        assert.is(await raw.countRecords(ns), 0);
        assert.is(await raw.countRecords(next), 1);
      },
    );
  }
}

s.run();
