/**
 * The one writer of a pet's JSON text (lib/json.ts): what the core answers and what a backend
 * serves is `JSON.stringify` of the pet in the contract's key order, and its byte count is right.
 */
import fc from "fast-check";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { PetJson, petTextAround } from "../../lib/json.ts";
import type { Pet } from "../../lib/schemas.ts";
import { PET_STATUSES } from "../../lib/schemas.ts";

const pet = fc.record({
  id: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  name: fc.oneof(
    fc.string(),
    fc.string({ unit: "grapheme" }),
    fc.string({ unit: "binary" }),
    fc.constant(':"\\\u2028é🐕'),
    fc.constant("lone \ud800 surrogate"),
  ),
  categoryId: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  status: fc.constantFrom(...PET_STATUSES),
});
const reference = (p: Pet) => JSON.stringify({ id: p.id, name: p.name, categoryId: p.categoryId, status: p.status });

test("pet JSON: one pet, a page and the text around an id are JSON.stringify's, with their UTF-8 bytes", () => {
  fc.assert(
    fc.property(fc.array(pet, { maxLength: 5 }), (pets) => {
      const json = new PetJson();
      for (const p of pets) {
        const one = json.one(p);
        assert.is(one.text, reference(p));
        assert.is(one.bytes, Buffer.byteLength(one.text));
        const [head, tail] = petTextAround(p);
        assert.is(head + p.id + tail, reference(p));
      }
      const page = json.many(pets);
      assert.is(page.text, `[${pets.map(reference).join(",")}]`);
      assert.is(page.bytes, Buffer.byteLength(page.text));
    }),
    { numRuns: 500 },
  );
});

test("pet JSON: a kept text serves only a pet with the very same fields", () => {
  const json = new PetJson();
  const rex: Pet = { id: 7, name: "Rex", categoryId: 1, status: "available" };
  assert.is(json.one(rex).text, reference(rex));
  for (const other of [
    { ...rex, name: "Max" },
    { ...rex, categoryId: 2 },
    { ...rex, status: "sold" as const },
  ]) {
    assert.is(json.one(other).text, reference(other));
  }
});

test.run();
