/**
 * Business rules on every path: a create that `beforeCreate` refuses gets the same Error answer
 * (status, headers, body) from `handle()`, the Node adapter, the hapi plugin and the standalone
 * server, and in process `createPet` rejects with the same code, status and message; none of
 * them stores the pet, and `afterCreate` runs once per stored pet on each.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Pet } from "../../lib/entries/schemas.ts";
import type { PetStoreRules } from "../../lib/index.ts";
import { isPetStoreError, RuleViolation } from "../../lib/index.ts";
import type { Answer, Req } from "./targets.ts";
import { baseOf, IN_PROCESS_TARGETS, KEY } from "./targets.ts";

const TRANSPORT = new Set(["date", "connection", "keep-alive", "transfer-encoding"]);

function rules(stored: Pet[]): PetStoreRules {
  return {
    beforeCreate(pet) {
      if (![1, 2, 3].includes(pet.categoryId)) {
        throw new RuleViolation("unknown_category", `categoryId ${pet.categoryId} is not one of our categories.`);
      }
    },
    afterCreate(pet) {
      stored.push(pet);
    },
    codes: [{ code: "unknown_category", status: 422, description: "categoryId is not one of our categories." }],
  };
}

const create = (body: object, requestId: string, base = "/v1"): Req => ({
  method: "POST",
  path: `${base}/pets`,
  headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-request-id": requestId },
  body: JSON.stringify(body),
});

const list = (base: string): Req => ({
  method: "GET",
  path: `${base}/pets`,
  headers: { authorization: `Bearer ${KEY}`, "x-request-id": "l" },
});

/** The answer without transport headers, a mount path in its headers written back as "/v1". */
function comparable(answer: Answer, base: string) {
  const headers: Record<string, string> = {};
  for (const name of Object.keys(answer.headers).sort()) {
    if (!TRANSPORT.has(name)) headers[name] = (answer.headers[name] as string).replaceAll(base, "/v1");
  }
  return { status: answer.status, headers, body: answer.body };
}

test("rules: a refused create gets the same Error answer from every adapter, nothing is stored, afterCreate runs once per stored pet", async () => {
  const results: { name: string; refused: ReturnType<typeof comparable>; accepted: ReturnType<typeof comparable> }[] =
    [];
  for (const target of IN_PROCESS_TARGETS) {
    const stored: Pet[] = [];
    const session = await target.open({ rules: rules(stored) });
    try {
      const base = baseOf(target);
      const refused = await session.send(create({ name: "Rex", categoryId: 9 }, "refused-1", base));
      const accepted = await session.send(create({ name: "Tom", categoryId: 2 }, "accepted-1", base));
      const listed = await session.send(list(base));
      assert.equal(JSON.parse(listed.body), [{ id: 1, name: "Tom", categoryId: 2, status: "available" }], target.name);
      assert.equal(stored, [{ id: 1, name: "Tom", categoryId: 2, status: "available" }], `${target.name}: afterCreate`);
      results.push({ name: target.name, refused: comparable(refused, base), accepted: comparable(accepted, base) });
    } finally {
      await session.close();
    }
  }
  const [first, ...others] = results;
  assert.ok(first);
  assert.is(first.refused.status, 422);
  assert.equal(JSON.parse(first.refused.body), {
    code: "unknown_category",
    message: "categoryId 9 is not one of our categories.",
    status: 422,
  });
  for (const other of others) {
    assert.equal(other.refused, first.refused, `${other.name} refuses as ${first.name} does`);
    assert.equal(other.accepted, first.accepted, `${other.name} accepts as ${first.name} does`);
  }
});

test("rules: in process, createPet rejects with the code, status and message the adapters answer, and stores nothing", async () => {
  const stored: Pet[] = [];
  const session = await IN_PROCESS_TARGETS[0]?.open({ rules: rules(stored) });
  const store = session?.store;
  assert.ok(session && store);
  try {
    const error = await store.createPet({ name: "Rex", categoryId: 9 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.instance(error, RuleViolation);
    assert.ok(isPetStoreError(error));
    if (!(error instanceof RuleViolation)) return;
    const answer = await session.send(create({ name: "Rex", categoryId: 9 }, "r"));
    assert.equal(error.toJSON(), JSON.parse(answer.body));
    assert.is(error.status, answer.status);
    assert.equal((await store.listPets()).pets, []);
    assert.equal(stored, []);
  } finally {
    await session.close();
  }
});

test.run();
