/**
 * The Keyv text a create writes around Keyv (lib/storage/values.ts, keyvTextAround): built
 * directly, it is byte for byte what Keyv's own serializer writes, and reads back through Keyv as
 * the pet; a Keyv whose serializer writes otherwise gets its serializer's text.
 */
import fc from "fast-check";
import Keyv from "keyv";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Pet } from "../../lib/schemas.ts";
import {
  decodedValue,
  keyvTextAround,
  makeKeyvPetReader,
  petOfKeyvText,
  petValues,
  type RecordNames,
} from "../../lib/storage/values.ts";

const t = suite("keyv text of a pet");

const NAMES = [
  "Rex",
  ":starts with a colon",
  "::two",
  ":base64:AAAA",
  'quote " and backslash \\',
  "line\u2028separator",
  "é 中文 🐕",
  "\u0001\u001f control",
  "x".repeat(500),
];

t("it is Keyv's serializer's text, and Keyv reads the pet back", async () => {
  const values = new Keyv();
  const serialize = values.serialize as (data: unknown) => string;
  for (const [i, name] of NAMES.entries()) {
    const data = { name, categoryId: 9_007_199_254_740_991 - i, status: "pending" as const };
    const [head, tail] = keyvTextAround(values, data);
    const id = 42 + i;
    const pet: Pet = { id, ...data };
    assert.is(head + id + tail, serialize({ value: pet }), name);
    const read = (await values.deserialize?.(head + id + tail)) as { value: Pet };
    assert.equal(read.value, pet, name);
  }
});

t("a stored text reads as Keyv's own decoder reads it, strings starting with a colon included", async () => {
  const values = petValues(new Keyv().opts.store, { namespace: "pets", keyPrefix: true });
  const serialize = values.serialize as (data: unknown) => string;
  const text = fc.oneof(
    fc.string(),
    fc.string().map((s) => `:${s}`),
    fc.constant(":base64:AAAA"),
  );
  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      text,
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      tie("array"),
      tie("object"),
    ),
    array: fc.array(tie("value"), { maxLength: 4 }),
    object: fc.dictionary(text, tie("value"), { maxKeys: 4 }),
  })).value;
  await fc.assert(
    fc.asyncProperty(json, async (value) => {
      const raw = serialize({ value });
      const theirs = (await values.deserialize?.(raw)) as { value: unknown };
      assert.equal(decodedValue(raw, values), theirs.value);
    }),
    { numRuns: 2000 },
  );
});

t("a store's page reader gives what petOfKeyvText gives, read again or not, as a new object each time", () => {
  const values = petValues(new Keyv().opts.store, { namespace: "pets", keyPrefix: true });
  const serialize = values.serialize as (data: unknown) => string;
  const names: RecordNames = { backend: "test", pet: (id) => `pets:${id}`, index: "ids", sequence: "seq" };
  const read = makeKeyvPetReader(values, names);
  const text = (pet: Pet, expires?: number) =>
    serialize(expires === undefined ? { value: pet } : { value: pet, expires });
  const rex: Pet = { id: 7, name: ":Rex", categoryId: 1, status: "sold" };
  const outcome = (f: () => unknown) => {
    try {
      return { pet: f() };
    } catch (error) {
      return { error: String(error) };
    }
  };
  const cases: [number, unknown][] = [
    [7, text(rex)],
    [7, text(rex)], // the same text again
    [7, text({ ...rex, name: "Max" })], // another text in the same slot
    [7 + 256, text({ ...rex, id: 7 + 256 })], // another id in the same slot
    [7, text(rex)],
    [7, text(rex, Date.now() - 1)], // expired: gone
    [7, text(rex, Date.now() + 60_000)],
    [7, "not json"],
    [7, "not json"],
    [8, text(rex)], // another id's pet
    [9, null],
  ];
  let last: unknown;
  for (const [id, raw] of cases) {
    const got = outcome(() => read(id, raw));
    assert.equal(
      got,
      outcome(() => petOfKeyvText(id, raw, values, names)),
      `${id} ${String(raw)}`,
    );
    assert.ok(got.pet === undefined || got.pet !== last, "a new object each time");
    last = got.pet;
  }
});

t("a Keyv whose serializer writes otherwise gets its serializer's text", () => {
  const values = new Keyv({
    serialize: (data: unknown) => JSON.stringify(data).replace(/^\{"value":\{"id":0,/, '{"value":{"id":0, '),
  });
  const [head, tail] = keyvTextAround(values, { name: ":Rex", categoryId: 7, status: "sold" });
  assert.is(`${head}7${tail}`, '{"value":{"id":7, "name":":Rex","categoryId":7,"status":"sold"}}');
});

t.run();
