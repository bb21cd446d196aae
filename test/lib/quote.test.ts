/** Client input in error answers (lib/quote.ts): cut to 64 characters with …, and no Error body over 4 KiB. */

import { test } from "uvu";
import * as assert from "uvu/assert";
import { boundedDetails, cut, MAX_ERROR_BYTES, quote } from "../../lib/quote.ts";
import { call, errorOf, makeStore } from "../support/helpers.ts";

const bytesOf = (text: string) => new TextEncoder().encode(text).length;

test("quote: input of at most 64 characters is shown whole; longer input is cut to 64 characters and …", () => {
  assert.is(cut(""), "");
  assert.is(cut("x".repeat(64)), "x".repeat(64));
  assert.is(cut("x".repeat(65)), `${"x".repeat(64)}…`);
  assert.is(quote("name"), '"name"');
  assert.is(quote('a"b'), '"a\\"b"');
  assert.is(quote("y".repeat(65_000)), `"${"y".repeat(64)}…"`);
});

test("quote: characters are code points, and a cut never splits a surrogate pair", () => {
  assert.is(cut("🐶".repeat(64)), "🐶".repeat(64));
  assert.is(cut("🐶".repeat(65)), `${"🐶".repeat(64)}…`);
  assert.is(cut(`${"x".repeat(63)}🐶🐶`), `${"x".repeat(63)}🐶…`);
});

test("createPet: an unknown field name of 65,000 characters is named cut to 64 characters and …", async () => {
  const name = "f".repeat(65_000);
  const res = await call(makeStore({ maxBodyBytes: 1 << 20 }), "POST", "/v1/pets", {
    body: JSON.stringify({ name: "Rex", categoryId: 1, [name]: 1 }),
  });
  assert.is(res.status, 400);
  const error = errorOf(res);
  assert.is(error.code, "invalid_body");
  const shown = `${"f".repeat(64)}…`;
  assert.equal(error.details, [{ path: shown, message: "is an unknown field" }]);
  assert.ok(error.message.includes(shown), error.message);
  assert.ok(bytesOf(res.body) <= MAX_ERROR_BYTES, `${bytesOf(res.body)} bytes`);
});

for (const [label, key] of [
  ["ASCII", (i: number) => `field-${i}-${"z".repeat(70)}`],
  ["control characters (escaped in six bytes each)", (i: number) => `${i}${"\u0001".repeat(70)}`],
  ["emoji (four bytes each)", (i: number) => `${i}${"🐶".repeat(70)}`],
] as const) {
  test(`createPet: 2,000 long unknown fields of ${label} beside three invalid values give an Error body of at most 4 KiB`, async () => {
    const body: Record<string, unknown> = { name: "   ", categoryId: "x", status: null };
    for (let i = 0; i < 2000; i++) body[key(i)] = i;
    const res = await call(makeStore({ maxBodyBytes: 1 << 22 }), "POST", "/v1/pets", { body: JSON.stringify(body) });
    assert.is(res.status, 400);
    const error = errorOf(res);
    assert.is(error.code, "invalid_body");
    assert.ok(bytesOf(res.body) <= MAX_ERROR_BYTES, `${bytesOf(res.body)} bytes`);
    const details = error.details ?? [];
    assert.equal(
      details.slice(0, 3).map((d) => d.path),
      ["name", "categoryId", "status"],
    );
    assert.ok(details.length <= 4, `${details.length} details`);
    for (const detail of details) assert.ok([...detail.path].length <= 65, detail.path);
  });
}

test("boundedDetails: thousands of details of the longest names keep the first ones that fit, at least one, and count the rest", () => {
  for (const name of ["z".repeat(70), "\u0001".repeat(70), "🐶".repeat(70)]) {
    const all = Array.from({ length: 2000 }, (_, i) => ({ path: `${i}${name}`, message: "is an unknown field" }));
    const { shown, omitted } = boundedDetails(all);
    assert.ok(shown.length >= 1);
    assert.is(shown.length + omitted, 2000);
    assert.is(shown[0]?.path, cut(`0${name}`));
    const words = shown.map((d) => `${d.path} ${d.message}`).join("; ");
    const body = JSON.stringify({
      code: "invalid_body",
      message: `The request body is not a valid NewPet: ${words} (and ${omitted} more).`,
      status: 400,
      details: shown,
    });
    assert.ok(bytesOf(body) <= MAX_ERROR_BYTES, `${bytesOf(body)} bytes`);
  }
  const few = [
    { path: "name", message: "is required" },
    { path: "colour", message: "is an unknown field" },
  ];
  assert.equal(boundedDetails(few), { shown: few, omitted: 0 });
});

test("createPet: a few invalid fields are all listed, as before", async () => {
  const res = await call(makeStore(), "POST", "/v1/pets", {
    body: '{"name":"","categoryId":0,"status":"lost","colour":"brown"}',
  });
  const error = errorOf(res);
  assert.equal(
    error.details?.map((d) => d.path),
    ["name", "categoryId", "status", "colour"],
  );
  assert.not.match(error.message, /more\)/);
});

test.run();
