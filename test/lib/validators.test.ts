/**
 * The validators of lib/validators.ts: tags derived from the data alone (the same for the same pets
 * in any store, another for any change a representation can show), the page's length counted from
 * its pets as the page's text has it, and `If-None-Match` read as RFC 9110 §13.1.2 says.
 */
import fc from "fast-check";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { PetJson } from "../../lib/json.ts";
import type { PetPage } from "../../lib/operations.ts";
import type { Pet } from "../../lib/schemas.ts";
import { PET_STATUSES } from "../../lib/schemas.ts";
import { isNotModified, pageValidator, petValidator } from "../../lib/validators.ts";

const rex: Pet = { id: 7, name: "Rex", categoryId: 1, status: "available" };
const page = (pets: Pet[], more = false, limit = 20, status?: Pet["status"]): PetPage => ({
  pets,
  nextCursor: more ? "abc" : undefined,
  limit,
  status,
});

const pet = fc.record({
  id: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  name: fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.constant("lone \ud800 surrogate é🐕")),
  categoryId: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  status: fc.constantFrom(...PET_STATUSES),
});

test("validators: a tag is a strong entity tag, and the same pets give the same tag in another store (no clock, no counter)", () => {
  const a = petValidator(new PetJson(), rex).etag;
  const b = petValidator(new PetJson(), { ...rex }).etag;
  assert.match(a, /^"[0-9a-f]{16}"$/);
  assert.is(a, b);
  const pets = [rex, { ...rex, id: 8, name: "Max" }];
  assert.is(
    pageValidator(new PetJson(), page(pets)).etag,
    pageValidator(new PetJson(), page(pets.map((p) => ({ ...p })))).etag,
  );
});

test("validators: a pet's tag changes with any of its fields", () => {
  const json = new PetJson();
  const tag = petValidator(json, rex).etag;
  for (const other of [
    { ...rex, id: 8 },
    { ...rex, name: "Rexx" },
    { ...rex, categoryId: 2 },
    { ...rex, status: "sold" as const },
  ]) {
    assert.is.not(petValidator(json, other).etag, tag, JSON.stringify(other));
  }
  assert.is(petValidator(json, rex).etag, tag, "the kept text serves the first pet again");
});

test("validators: a page's tag changes when it fills, gains a next page, or holds other pets; limit and filter count too", () => {
  const json = new PetJson();
  const one = [rex];
  const two = [rex, { ...rex, id: 8 }];
  const tags = [
    pageValidator(json, page([])).etag,
    pageValidator(json, page(one)).etag,
    pageValidator(json, page(two)).etag,
    pageValidator(json, page(two, true)).etag,
    pageValidator(json, page(two, true, 2)).etag,
    pageValidator(json, page(two, false, 20, "available")).etag,
    pageValidator(json, page([{ ...rex, id: 8 }, rex])).etag,
    pageValidator(json, page([rex, { ...rex, id: 8, name: "Max" }])).etag,
  ];
  assert.is(new Set(tags).size, tags.length, tags.join(" "));
});

test("validators: a page's length is its text's UTF-8 length, counted without writing the text (reference: PetJson.many)", () => {
  fc.assert(
    fc.property(fc.array(pet, { maxLength: 8 }), fc.boolean(), (pets, more) => {
      const json = new PetJson();
      const { bytes } = pageValidator(json, page(pets, more));
      assert.is(bytes, Buffer.byteLength(new PetJson().many(pets).text));
      const one = pets[0];
      if (one !== undefined) {
        const { entry } = petValidator(json, one);
        assert.is(entry.text.length + entry.extra, Buffer.byteLength(JSON.stringify(one)));
      }
    }),
    { numRuns: 300 },
  );
});

test("validators: no two of many different pets share a tag", () => {
  const json = new PetJson();
  const seen = new Set<string>();
  for (let id = 1; id <= 20_000; id++) seen.add(petValidator(json, { ...rex, id, name: `pet-${id % 97}` }).etag);
  assert.is(seen.size, 20_000);
});

const TAG = '"0123456789abcdef"';

test("If-None-Match: the tag itself, or in a list, answers 304", () => {
  assert.ok(isNotModified(TAG, TAG));
  assert.ok(isNotModified(`"x", ${TAG}`, TAG));
  assert.ok(isNotModified(`"x",${TAG} , "y"`, TAG));
  assert.ok(isNotModified(['"x"', TAG], TAG), "a header given twice is one list");
});

test("If-None-Match: weak comparison, W/ matches the strong tag (a proxy that compressed weakened it)", () => {
  assert.ok(isNotModified(`W/${TAG}`, TAG));
  assert.ok(isNotModified(`W/"x", W/${TAG}`, TAG));
});

test("If-None-Match: * matches any current representation", () => {
  assert.ok(isNotModified("*", TAG));
  assert.ok(isNotModified(" * ", TAG));
});

test("If-None-Match: another tag, a tag that only contains ours, an unquoted or cut tag, or a malformed list never answers 304", () => {
  for (const header of [
    '"x"',
    '"0123456789abcdef-br"',
    '"x0123456789abcdef"',
    "0123456789abcdef",
    '"0123456789abcdef',
    `w/${TAG}`,
    `*, ${TAG}`,
    `garbage, ${TAG}`,
    "",
    "W/",
  ]) {
    assert.not.ok(isNotModified(header, TAG), header);
  }
  assert.not.ok(isNotModified(undefined, TAG));
});

test.run();
