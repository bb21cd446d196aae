/**
 * A suite written only against the store's `Operations` type: each case gets a fresh, empty store
 * (with one business rule: categoryId 99 is refused with `unknown_category`, 422) and uses nothing
 * but `listPets`, `createPet` and `getPet`. test/client/operations.test.ts runs it on the
 * in-process store and on the client over HTTP, where it must pass unchanged.
 */
import assert from "node:assert/strict";
import type { Operations, PetStoreRules } from "../../lib/index.ts";
import { isPetStoreError, isRuleViolation, RuleViolation } from "../../lib/index.ts";

/** The rule every target's store is made with. */
export const SUITE_RULES: PetStoreRules = {
  beforeCreate(pet) {
    if (pet.categoryId === 99) throw new RuleViolation("unknown_category", "categoryId 99 is not one of ours.");
  },
};

export interface OperationsCase {
  name: string;
  run(ops: Operations): Promise<void>;
}

/** Asserts that `call` rejects with a PetStoreError of `code` and `status`; returns it. */
async function rejectsWith(call: Promise<unknown>, code: string, status: number) {
  const error = await call.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => e,
  );
  assert.ok(isPetStoreError(error, code), `expected ${code}, got ${String(error)}`);
  assert.equal(error.status, status);
  return error;
}

async function seed(ops: Operations, count: number, status?: "available" | "pending" | "sold") {
  for (let i = 1; i <= count; i++)
    await ops.createPet({ name: `pet-${i}`, categoryId: 1, ...(status ? { status } : {}) });
}

export const OPERATIONS_CASES: OperationsCase[] = [
  {
    name: "createPet stores a NewPet with its defaults and ids in creation order; getPet reads it back",
    async run(ops) {
      const rex = await ops.createPet({ name: "Rex", categoryId: 3 });
      assert.deepEqual(rex, { id: 1, name: "Rex", categoryId: 3, status: "available" });
      const sold = await ops.createPet({ name: "Tom", categoryId: 4, status: "sold" });
      assert.equal(sold.id, 2);
      assert.deepEqual(await ops.getPet(1), rex);
      assert.deepEqual(await ops.getPet("2"), sold);
    },
  },
  {
    name: "createPet refuses an invalid NewPet with invalid_body naming the field",
    async run(ops) {
      const blank = await rejectsWith(ops.createPet({ name: " ", categoryId: 1 }), "invalid_body", 400);
      assert.ok(blank.details?.some((d) => d.path === "name"));
      const extra = await rejectsWith(ops.createPet({ name: "a", categoryId: 1, id: 5 } as never), "invalid_body", 400);
      assert.ok(extra.details?.some((d) => d.path === "id"));
      await rejectsWith(ops.createPet({ name: "a", categoryId: "5" } as never), "invalid_body", 400);
      await rejectsWith(ops.createPet({ name: "a", categoryId: 2 ** 53 }), "invalid_body", 400);
    },
  },
  {
    name: "getPet: pet_not_found for an id no pet has; invalid_pet_id for anything that is no id",
    async run(ops) {
      await rejectsWith(ops.getPet(7), "pet_not_found", 404);
      for (const id of [0, -1, 1.5, "abc", "", "9007199254740992"])
        await rejectsWith(ops.getPet(id), "invalid_pet_id", 400);
    },
  },
  {
    name: "listPets: pages of limit pets (default 20), nextCursor until the last page; following it visits each pet once",
    async run(ops) {
      await seed(ops, 45);
      const first = await ops.listPets();
      assert.equal(first.pets.length, 20);
      assert.equal(first.limit, 20);
      const seen: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await ops.listPets({ limit: 7, ...(cursor === undefined ? {} : { cursor }) });
        assert.equal(page.limit, 7);
        seen.push(...page.pets.map((p) => p.id));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      assert.deepEqual(
        seen,
        Array.from({ length: 45 }, (_, i) => i + 1),
      );
      assert.equal((await ops.listPets({ limit: 100 })).nextCursor, undefined);
    },
  },
  {
    name: "listPets: status filters, also across pages",
    async run(ops) {
      await seed(ops, 3, "sold");
      await seed(ops, 2, "pending");
      const first = await ops.listPets({ status: "sold", limit: 2 });
      assert.equal(first.status, "sold");
      assert.deepEqual(
        first.pets.map((p) => p.id),
        [1, 2],
      );
      const second = await ops.listPets({ status: "sold", limit: 2, cursor: first.nextCursor as string });
      assert.deepEqual(
        second.pets.map((p) => p.id),
        [3],
      );
      assert.equal(second.nextCursor, undefined);
      assert.deepEqual(
        (await ops.listPets({ status: "pending" })).pets.map((p) => p.name),
        ["pet-1", "pet-2"],
      );
    },
  },
  {
    name: "listPets: invalid_query for a limit out of 1..100, an unknown status, a cursor the service did not issue",
    async run(ops) {
      for (const query of [{ limit: 0 }, { limit: 101 }, { limit: 1.5 }, { status: "lost" }, { cursor: "nope" }]) {
        await rejectsWith(ops.listPets(query as never), "invalid_query", 400);
      }
      await seed(ops, 3, "sold");
      const page = await ops.listPets({ status: "sold", limit: 1 });
      await rejectsWith(ops.listPets({ status: "pending", cursor: page.nextCursor as string }), "invalid_query", 400);
    },
  },
  {
    name: "createPet with an idempotencyKey: once per key; the same NewPet again is the replay; another is idempotency_key_reused",
    async run(ops) {
      const first = await ops.createPet({ name: "Rex", categoryId: 1 }, { idempotencyKey: "order-1" });
      assert.deepEqual(first, { pet: { id: 1, name: "Rex", categoryId: 1, status: "available" }, replayed: false });
      const again = await ops.createPet(
        { categoryId: 1, name: "Rex", status: "available" },
        { idempotencyKey: "order-1" },
      );
      assert.deepEqual(again, { pet: first.pet, replayed: true });
      await rejectsWith(
        ops.createPet({ name: "Max", categoryId: 1 }, { idempotencyKey: "order-1" }),
        "idempotency_key_reused",
        422,
      );
      await rejectsWith(
        ops.createPet({ name: "Max", categoryId: 1 }, { idempotencyKey: "a b" }),
        "invalid_idempotency_key",
        400,
      );
      assert.equal((await ops.listPets()).pets.length, 1);
    },
  },
  {
    name: "a business rule's refusal: its code and status, isRuleViolation() true, nothing stored",
    async run(ops) {
      const error = await rejectsWith(ops.createPet({ name: "Rex", categoryId: 99 }), "unknown_category", 422);
      assert.equal(error.message, "categoryId 99 is not one of ours.");
      assert.ok(isRuleViolation(error));
      assert.deepEqual((await ops.listPets()).pets, []);
    },
  },
];
