/**
 * The body of a create before it is a NewPet (lib/body.ts): I-JSON's unique member names, held to
 * the fuzz oracle's plain recursive-descent reading of the rule; the charset and Content-Encoding
 * a create accepts.
 */
import fc from "fast-check";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseJson, repeatedMember } from "../../lib/body.ts";
import { isRefusal } from "../../lib/errors.ts";
import { repeatedMemberOf } from "../fuzz/oracle.ts";
import { AUTH, call, errorOf, makeStore } from "../support/helpers.ts";

/** Member names chosen to collide: escapes, colons, quotes, __proto__, and the same name spelled two ways. */
const NAME_TEXTS = fc.constantFrom(
  '"a"',
  '"\\u0061"',
  '"b"',
  '"a:b"',
  '"__proto__"',
  '"\\"q\\""',
  '"x\\\\"',
  '"name"',
  '"n\\u00e4me"',
  '"näme"',
  '""',
);
const WHITESPACE = fc.constantFrom("", " ", "\n  ");

/** JSON texts (whitespace included) whose objects often repeat a member name. */
const { json: JSON_TEXT } = fc.letrec<{ json: string; object: string; array: string; primitive: string }>((tie) => ({
  json: fc.oneof({ depthSize: "small", withCrossShrink: true }, tie("primitive"), tie("object"), tie("array")),
  primitive: fc.oneof(
    fc.constantFrom("1", "-0.5e3", "true", "false", "null", '"::"', '"{\\"a\\":1,\\"a\\":2}"', '"\\\\"'),
    fc.string().map((s) => JSON.stringify(s)),
  ),
  object: fc
    .array(fc.tuple(NAME_TEXTS, WHITESPACE, tie("json")), { maxLength: 5 })
    .map((members) => `{${members.map(([name, ws, value]) => `${ws}${name}${ws}:${ws}${value}`).join(",")}}`),
  array: fc.array(tie("json"), { maxLength: 4 }).map((items) => `[${items.join(", ")}]`),
}));

test("parseJson: the repeated member found is the reference parser's, over generated JSON texts", () => {
  const seen = { repeated: 0, unique: 0 };
  fc.assert(
    fc.property(JSON_TEXT, (text) => {
      const expected = repeatedMemberOf(text);
      seen[expected === undefined ? "unique" : "repeated"]++;
      assert.is(repeatedMember(text, JSON.parse(text)), expected, text);
      const parsed = parseJson(text, 1 << 20);
      if (expected === undefined) assert.not.ok(isRefusal(parsed), text);
      else {
        assert.ok(isRefusal(parsed), text);
        assert.is(parsed.code, "malformed_json");
        assert.ok(parsed.message.includes(JSON.stringify(expected)), `${parsed.message} names ${expected}`);
      }
    }),
    { numRuns: 3000 },
  );
  assert.ok(seen.repeated > 300 && seen.unique > 300, `both kinds of text were generated: ${JSON.stringify(seen)}`);
});

for (const [label, body, member] of [
  ["a repeated name", '{"name":"Rex","name":"Mia","categoryId":1}', "name"],
  ["__proto__ twice", '{"__proto__":1,"__proto__":2}', "__proto__"],
  ["a name repeated by an escape", '{"name":"Rex","\\u006eame":"Mia","categoryId":1}', "name"],
  ["a repeated name in a nested object", '{"name":{"a":1,"a":2},"categoryId":1}', "a"],
  ["a repeated name inside an array", '{"name":[{"b":1},{"b":2,"b":3}],"categoryId":1}', "b"],
] as const) {
  test(`createPet: ${label} is refused with 400 malformed_json naming it`, async () => {
    const res = await call(makeStore(), "POST", "/v1/pets", { body });
    assert.is(res.status, 400);
    const error = errorOf(res);
    assert.is(error.code, "malformed_json");
    assert.is(error.message, `The request body repeats the member ${JSON.stringify(member)}.`);
  });
}

test("createPet: names that only look repeated (colons in strings, the same name in two objects) are accepted", async () => {
  const store = makeStore();
  for (const body of ['{"name":"a:b:c","categoryId":1}', '{"name":"Rex","categoryId":1,"status":"sold"}']) {
    assert.is((await call(store, "POST", "/v1/pets", { body })).status, 201, body);
  }
  assert.is(repeatedMember('[{"a":1},{"a":2}]', [{ a: 1 }, { a: 2 }]), undefined);
});

test("createPet: a repeated member name of 30,000 characters is named cut to 64 characters and …", async () => {
  const long = "m".repeat(30_000);
  const res = await call(makeStore(), "POST", "/v1/pets", { body: `{"${long}":1,"${long}":2}` });
  assert.is(res.status, 400);
  const error = errorOf(res);
  assert.is(error.code, "malformed_json");
  assert.is(error.message, `The request body repeats the member "${"m".repeat(64)}…".`);
});

test("syntax: 30,000 nested objects with a repeated name at the bottom are answered 400 malformed_json, not a crash", async () => {
  const body = `${'{"a":'.repeat(30_000)}{"b":1,"b":2}${"}".repeat(30_000)}`;
  const res = await call(makeStore({ maxBodyBytes: 1 << 20 }), "POST", "/v1/pets", { body });
  assert.is(res.status, 400);
  assert.is(errorOf(res).code, "malformed_json");
});

// ---- charset and Content-Encoding -------------------------------------------------------

for (const type of [
  "application/json; charset=latin1",
  "application/json; charset=ISO-8859-1",
  "application/json; charset=utf-16",
  'application/json; charset="latin1"',
  "application/json; charset=utf-8; charset=latin1",
]) {
  test(`content type: ${type} (a charset other than utf-8) gives 415 unsupported_media_type saying UTF-8`, async () => {
    const res = await call(makeStore(), "POST", "/v1/pets", {
      headers: { "content-type": type },
      body: '{"name":"Rex","categoryId":1}',
    });
    assert.is(res.status, 415);
    const error = errorOf(res);
    assert.is(error.code, "unsupported_media_type");
    assert.match(error.message, /UTF-8/);
  });
}

for (const type of ['application/json; charset="UTF-8"', "application/json;CHARSET=Utf-8", "application/json; q=1"]) {
  test(`content type: ${type} (utf-8 in any case, quoted, or no charset) is accepted`, async () => {
    const res = await call(makeStore(), "POST", "/v1/pets", {
      headers: { "content-type": type },
      body: '{"name":"Rex","categoryId":1}',
    });
    assert.is(res.status, 201, res.body);
  });
}

for (const encoding of ["gzip", "br", "deflate", "identity, gzip", ["identity", "gzip"]]) {
  test(`createPet: Content-Encoding ${JSON.stringify(encoding)} gives 415 unsupported_media_type saying the body must not be compressed`, async () => {
    let read = false;
    const res = await makeStore().handle({
      method: "POST",
      path: "/v1/pets",
      headers: { authorization: AUTH, "content-type": "application/json", "content-encoding": encoding },
      body: async () => {
        read = true;
        return '{"name":"Rex","categoryId":1}';
      },
    });
    assert.is(res.status, 415);
    const error = errorOf(res);
    assert.is(error.code, "unsupported_media_type");
    assert.match(error.message, /must not be compressed/);
    assert.not.ok(read, "the body is not read");
  });
}

for (const encoding of ["identity", "IDENTITY", " Identity ", ""]) {
  test(`createPet: Content-Encoding ${JSON.stringify(encoding)} (identity in any case) is accepted`, async () => {
    const res = await call(makeStore(), "POST", "/v1/pets", {
      headers: { "content-encoding": encoding },
      body: '{"name":"Rex","categoryId":1}',
    });
    assert.is(res.status, 201, res.body);
  });
}

test("createPet: Content-Encoding and charset are checked with the content type, before size (415 before 413)", async () => {
  for (const headers of [
    { "content-encoding": "gzip", "content-length": "999999" },
    { "content-type": "application/json; charset=latin1", "content-length": "999999" },
  ]) {
    const res = await call(makeStore(), "POST", "/v1/pets", { headers, body: "{" });
    assert.is(res.status, 415, JSON.stringify(headers));
  }
});

test.run();
