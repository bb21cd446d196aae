/** apiKeys: the constant-time comparison accepts exactly the keys, whatever their lengths and the token's. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { apiKeys } from "../../lib/auth/keys.ts";

/** Keys of the lengths where the comparison changes: one character, around the direct limit (256), past it. */
const KEYS = ["k", "ab", "bench-key", "x".repeat(31), "0123456789abcdef0123456789abcdef", "y".repeat(255)];
const LONG_KEYS = ["z".repeat(256), "w".repeat(257), `${"q".repeat(299)}!`];

/** Tokens near `key`: itself, its prefixes and extensions, repeats, one character changed anywhere, other case. */
function* near(key: string): Generator<string> {
  yield key;
  yield key.slice(0, -1);
  yield `${key}${key}`;
  yield `${key}${key[0]}`;
  yield key.repeat(3).slice(0, key.length + 1);
  yield key.toUpperCase();
  for (let at = 0; at < key.length; at += Math.max(1, Math.floor(key.length / 7))) {
    yield `${key.slice(0, at)}${String.fromCharCode(key.charCodeAt(at) ^ 1)}${key.slice(at + 1)}`;
  }
  yield `${key.slice(0, -1)}\u0100`; // a character past Latin-1 in the last place
}

test("apiKeys: each key of any length is accepted, and every near miss refused, alone and among others", () => {
  const all = [...KEYS, ...LONG_KEYS];
  const verifyAll = apiKeys(all);
  let checked = 0;
  for (const key of all) {
    const verifyOne = apiKeys([key]);
    for (const token of near(key)) {
      const want = token === key;
      assert.is(
        verifyOne(token) !== false,
        want,
        `${JSON.stringify(token.slice(0, 40))} against one key of ${key.length}`,
      );
      assert.is(verifyAll(token) !== false, all.includes(token), `${JSON.stringify(token.slice(0, 40))} against all`);
      checked++;
    }
  }
  assert.ok(checked > 100);
});

test("apiKeys: tokens of every length from 1 to 300 are refused unless one is a key", () => {
  const verify = apiKeys(["key", "k".repeat(260)]);
  for (let length = 1; length <= 300; length++) {
    for (const fill of ["k", "y"]) {
      const token = fill.repeat(length);
      assert.is(verify(token) !== false, token === "k".repeat(260), `${fill} × ${length}`);
    }
  }
  assert.ok(verify("key"));
  assert.not.ok(verify("keykey"));
  assert.not.ok(verify("ke"));
});
test.run();
