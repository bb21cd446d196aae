/** The hot path's character loops (lib/chars.ts) say what the regular expressions they replace said. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { hasUpperCase, isDigits, isPlainJson } from "../../lib/chars.ts";

/** Every character from U+0000 to U+00FF alone and inside text, a few beyond, and the empty string. */
function* strings(): Generator<string> {
  yield "";
  for (let c = 0; c <= 0xff; c++) {
    const ch = String.fromCharCode(c);
    yield ch;
    yield `0${ch}9`;
    yield `ab${ch}`;
  }
  yield* ["0", "0123456789", "29", "١٢", "𝟘", "Rex", "content-length", "X-Request-Id", "é", "🐶", "\u2028", "\ud83d"];
}

test("chars: hasUpperCase, isDigits and isPlainJson answer as /[A-Z]/, /^[0-9]+$/ and JSON's plain characters", () => {
  let checked = 0;
  for (const s of strings()) {
    assert.is(hasUpperCase(s), /[A-Z]/.test(s), `hasUpperCase(${JSON.stringify(s)})`);
    assert.is(isDigits(s), /^[0-9]+$/.test(s), `isDigits(${JSON.stringify(s)})`);
    assert.is(
      isPlainJson(s),
      JSON.stringify(s) === `"${s}"` && /^[\x20-\x7e]*$/.test(s),
      `isPlainJson(${JSON.stringify(s)})`,
    );
    checked++;
  }
  assert.ok(checked > 700);
});

test.run();
