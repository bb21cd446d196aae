/**
 * The Keyv text a create writes around Keyv (lib/storage/values.ts, keyvTextAround): built
 * directly, it is byte for byte what Keyv's own serializer writes, and reads back through Keyv as
 * the pet; a Keyv whose serializer writes otherwise gets its serializer's text.
 */
import Keyv from "keyv";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Pet } from "../../lib/schemas.ts";
import { keyvTextAround } from "../../lib/storage/values.ts";

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

t("a Keyv whose serializer writes otherwise gets its serializer's text", () => {
  const values = new Keyv({
    serialize: (data: unknown) => JSON.stringify(data).replace(/^\{"value":\{"id":0,/, '{"value":{"id":0, '),
  });
  const [head, tail] = keyvTextAround(values, { name: ":Rex", categoryId: 7, status: "sold" });
  assert.is(`${head}7${tail}`, '{"value":{"id":7, "name":":Rex","categoryId":7,"status":"sold"}}');
});

t.run();
