/** The NewPet rules of the contract, each proven against createPet() and against handle(). */

import { test } from "uvu";
import * as assert from "uvu/assert";
import * as v from "valibot";
import type { NewPetInput } from "../../lib/index.ts";
import { isPetStoreError } from "../../lib/index.ts";
import { NewPet, usualNewPet } from "../../lib/schemas.ts";
import { call, errorOf, json, makeStore } from "../support/helpers.ts";

const name200 = "n".repeat(200);
const emoji200 = "🐶".repeat(200);

/** Bodies refused with 400 invalid_body, and the field the error must name. */
const refused: [rule: string, body: string, field: string][] = [
  ["name is required", '{"categoryId":1}', "name"],
  ["categoryId is required", '{"name":"Rex"}', "categoryId"],
  ['name "" is refused', '{"name":"","categoryId":1}', "name"],
  ['name "   " (only whitespace) is refused', '{"name":"   ","categoryId":1}', "name"],
  ["name of 201 characters is refused", JSON.stringify({ name: "n".repeat(201), categoryId: 1 }), "name"],
  ["name that is not a string is refused", '{"name":5,"categoryId":1}', "name"],
  ['categoryId "5" (a string) is refused', '{"name":"Rex","categoryId":"5"}', "categoryId"],
  ["categoryId 5.5 is refused", '{"name":"Rex","categoryId":5.5}', "categoryId"],
  ["categoryId 0 is refused", '{"name":"Rex","categoryId":0}', "categoryId"],
  ["categoryId -1 is refused", '{"name":"Rex","categoryId":-1}', "categoryId"],
  [
    "categoryId 9007199254740992 (2^53) is refused, not rounded",
    '{"name":"Rex","categoryId":9007199254740992}',
    "categoryId",
  ],
  ["categoryId 1e400 is refused", '{"name":"Rex","categoryId":1e400}', "categoryId"],
  ["categoryId null is refused", '{"name":"Rex","categoryId":null}', "categoryId"],
  ["status null is refused", '{"name":"Rex","categoryId":1,"status":null}', "status"],
  ['status "Available" (wrong case) is refused', '{"name":"Rex","categoryId":1,"status":"Available"}', "status"],
  ['status "lost" is refused', '{"name":"Rex","categoryId":1,"status":"lost"}', "status"],
  ["an unknown field is refused, naming it", '{"name":"Rex","categoryId":1,"colour":"brown"}', "colour"],
  ["a client-chosen id is refused", '{"id":7,"name":"Rex","categoryId":1}', "id"],
  ["a __proto__ field is refused", '{"name":"Rex","categoryId":1,"__proto__":{"polluted":true}}', "__proto__"],
  [
    "a constructor field is refused",
    '{"name":"Rex","categoryId":1,"constructor":{"prototype":{"polluted":true}}}',
    "constructor",
  ],
];

/** Bodies that are not objects: invalid_body without a field. */
const notObjects: [string, string][] = [
  ["a null body is refused", "null"],
  ["an array body is refused", "[]"],
  ['a string body "x" is refused', '"x"'],
  ["a number body is refused", "5"],
];

for (const [rule, body, field] of refused) {
  test(`createPet: ${rule} with invalid_body`, async () => {
    const store = makeStore();
    try {
      await store.createPet(JSON.parse(body));
      assert.unreachable("createPet should have thrown");
    } catch (error) {
      assert.ok(isPetStoreError(error, "invalid_body"), String(error));
      assert.ok(
        error.details?.some((d) => d.path === field),
        JSON.stringify(error.details),
      );
    }
    assert.equal((await store.listPets()).pets, [], "nothing was stored");
  });

  test(`handle POST /v1/pets: ${rule} with 400 invalid_body naming "${field}"`, async () => {
    const store = makeStore();
    const res = await call(store, "POST", "/v1/pets", { body: body });
    assert.is(res.status, 400);
    const error = errorOf(res);
    assert.is(error.code, "invalid_body");
    assert.ok(
      error.details?.some((d) => d.path === field),
      res.body,
    );
    assert.ok(error.message.includes(field), `message names the field: ${error.message}`);
    const detail = error.details?.find((d) => d.path === field)?.message ?? "";
    if (rule.includes("required")) assert.is(detail, "is required");
    else if (["colour", "id", "__proto__", "constructor"].includes(field)) assert.match(detail, /unknown field/);
    else assert.not.match(detail, /unknown field|is required/);
    assert.is(res.headers.location, undefined);
    assert.equal((await store.listPets()).pets, [], "nothing was stored");
  });
}

for (const [rule, body] of notObjects) {
  test(`createPet: ${rule} with invalid_body`, async () => {
    const store = makeStore();
    try {
      await store.createPet(JSON.parse(body));
      assert.unreachable("createPet should have thrown");
    } catch (error) {
      assert.ok(isPetStoreError(error, "invalid_body"), String(error));
    }
  });
  test(`handle POST /v1/pets: ${rule} with 400 invalid_body`, async () => {
    const res = await call(makeStore(), "POST", "/v1/pets", { body });
    assert.is(res.status, 400);
    assert.is(errorOf(res).code, "invalid_body");
  });
}

test("handle POST /v1/pets: a missing (empty) body is refused with 400 invalid_body", async () => {
  for (const body of [undefined, "", "   \n"]) {
    const res = await call(makeStore(), "POST", "/v1/pets", { body });
    assert.is(res.status, 400, JSON.stringify(body));
    assert.is(errorOf(res).code, "invalid_body");
  }
});

test("createPet: no prototype pollution through __proto__ or constructor", async () => {
  const store = makeStore();
  await store.handle({
    method: "POST",
    path: "/v1/pets",
    headers: { authorization: "Bearer test-key-0123456789", "content-type": "application/json" },
    body: '{"name":"Rex","categoryId":1,"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
  });
  assert.is(({} as Record<string, unknown>).polluted, undefined);
  assert.is(Object.hasOwn(Object.prototype, "polluted"), false);
});

const accepted: [rule: string, body: Record<string, unknown>, expected: Record<string, unknown>][] = [
  [
    "status omitted: the pet is created available",
    { name: "Rex", categoryId: 1 },
    { name: "Rex", categoryId: 1, status: "available" },
  ],
  [
    "status pending is kept",
    { name: "Rex", categoryId: 2, status: "pending" },
    { name: "Rex", categoryId: 2, status: "pending" },
  ],
  [
    "status sold is kept",
    { name: "Rex", categoryId: 3, status: "sold" },
    { name: "Rex", categoryId: 3, status: "sold" },
  ],
  [
    "a name of exactly 200 characters is accepted",
    { name: name200, categoryId: 1 },
    { name: name200, categoryId: 1, status: "available" },
  ],
  [
    "a name of 200 emoji (code points) is accepted",
    { name: emoji200, categoryId: 1 },
    { name: emoji200, categoryId: 1, status: "available" },
  ],
  [
    "categoryId 9007199254740991 (2^53-1) is accepted",
    { name: "Max", categoryId: 9007199254740991 },
    { name: "Max", categoryId: 9007199254740991, status: "available" },
  ],
  [
    "a name with surrounding spaces is kept as sent",
    { name: " Rex ", categoryId: 1 },
    { name: " Rex ", categoryId: 1, status: "available" },
  ],
];

for (const [rule, body, expected] of accepted) {
  test(`createPet: ${rule}`, async () => {
    const store = makeStore();
    const pet = await store.createPet(body as NewPetInput);
    assert.equal(pet, { id: 1, ...expected });
    assert.equal(await store.getPet(pet.id), pet);
  });

  test(`handle POST /v1/pets: ${rule} (201, Location, id first)`, async () => {
    const store = makeStore();
    const res = await call(store, "POST", "/v1/pets", { body: JSON.stringify(body) });
    assert.is(res.status, 201);
    const pet = json(res) as Record<string, unknown>;
    assert.equal(pet, { id: 1, ...expected });
    assert.equal(Object.keys(pet), ["id", "name", "categoryId", "status"], "key order id, name, categoryId, status");
    assert.is(res.headers.location, "/v1/pets/1");
  });
}

test("createPet: ids are positive, unique and increasing", async () => {
  const store = makeStore();
  const ids = [];
  for (let i = 0; i < 20; i++) ids.push((await store.createPet({ name: `p${i}`, categoryId: 1 })).id);
  assert.equal(
    ids,
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
});

test("createPet: concurrent creates all get distinct ids and are all listed", async () => {
  const store = makeStore();
  const pets = await Promise.all(
    Array.from({ length: 200 }, (_, i) => store.createPet({ name: `p${i}`, categoryId: 1 })),
  );
  assert.is(new Set(pets.map((p) => p.id)).size, 200);
  const listed = [];
  let cursor: string | undefined;
  do {
    const page = await store.listPets({ limit: 100, cursor });
    listed.push(...page.pets.map((p) => p.id));
    cursor = page.nextCursor;
  } while (cursor);
  assert.equal(
    listed,
    [...pets.map((p) => p.id)].sort((a, b) => a - b),
  );
});

test("handle POST /v1/pets: the Location header uses the configured base path", async () => {
  const store = makeStore({ basePath: "/api/v1" });
  const res = await call(store, "POST", "/api/v1/pets", { body: '{"name":"Rex","categoryId":1}' });
  assert.is(res.status, 201);
  assert.is(res.headers.location, "/api/v1/pets/1");
});

/** Every combination of these, and odd shapes beside them: what the hand check accepts, the schema must. */
const NAMES: unknown[] = [
  "Rex",
  name200,
  "n".repeat(201),
  emoji200.slice(0, 200),
  "",
  " ",
  "\u00a0",
  "\ufeff",
  "\u2028x",
  " Rex ",
  5,
  null,
  ["Rex"],
];
const IDS: unknown[] = [
  1,
  7,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 1,
  0,
  -1,
  1.5,
  Number.NaN,
  Infinity,
  "1",
  null,
];
const STATUSES: unknown[] = [undefined, "available", "pending", "sold", "Sold", "", null, 1];

function* candidates(): Generator<unknown> {
  for (const name of NAMES)
    for (const categoryId of IDS)
      for (const status of STATUSES) {
        yield { name, categoryId, status };
        yield status === undefined ? { name, categoryId } : { categoryId, status, name };
        yield { name, categoryId, status, id: 1 };
        yield Object.assign(Object.create({ extra: 1 }), { name, categoryId });
        yield Object.assign(Object.create({ name, categoryId }), { status });
        yield Object.assign([], { name, categoryId });
      }
  yield JSON.parse('{"name":"Rex","categoryId":1,"__proto__":{"x":1}}');
  yield Object.defineProperty({ name: "Rex", categoryId: 1 }, "hidden", { value: 1, enumerable: false });
  yield* [null, undefined, "Rex", 1, [], {}, () => 1];
}

test("createPet: the hand check of the usual NewPet accepts only what the schema accepts, with its result", () => {
  let accepted = 0;
  for (const input of candidates()) {
    const usual = usualNewPet(input);
    if (usual === undefined) continue;
    accepted++;
    const parsed = v.safeParse(NewPet, input);
    assert.ok(parsed.success, `the schema refuses what the hand check accepted: ${JSON.stringify(input)}`);
    const { name, categoryId, status = "available" } = parsed.output;
    assert.equal(usual, { name, categoryId, status }, JSON.stringify(input));
  }
  // the usual bodies do take the hand check (not only the schema)
  assert.equal(usualNewPet({ name: "Rex", categoryId: 7 }), { name: "Rex", categoryId: 7, status: "available" });
  assert.equal(usualNewPet(JSON.parse('{"name":"Rex","categoryId":7,"status":"sold"}')), {
    name: "Rex",
    categoryId: 7,
    status: "sold",
  });
  assert.ok(accepted > 50, `${accepted} accepted`);
});

test.run();
