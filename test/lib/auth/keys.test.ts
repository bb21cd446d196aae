/** apiKeys: exactly the keys are accepted (constant-time comparison, or a digest lookup), with their principals. */

import { createHash } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { apiKeys, keyPrincipals } from "../../../lib/auth/keys.ts";
import type { Principal } from "../../../lib/auth/principal.ts";
import { tokenId } from "../../../lib/auth/principal.ts";

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

test("apiKeys: keys beyond ASCII are compared exactly, and a lone surrogate never stands for U+FFFD", () => {
  const keys = ["caf\u00e9", "\u65e5\u672c-key", "emoji-\u{1f431}", "repl-\ufffd"];
  const verify = apiKeys(keys);
  for (const key of keys) {
    assert.ok(verify(key), JSON.stringify(key));
    for (const token of near(key)) assert.is(verify(token) !== false, keys.includes(token), JSON.stringify(token));
  }
  // Encoders write U+FFFD for a lone surrogate: such a token is no key, whatever its bytes would be.
  assert.not.ok(verify("repl-\ud800"));
  assert.not.ok(verify("repl-\udc00"));
  assert.not.ok(verify("emoji-\ud83d"));
  // A key that holds a lone surrogate is found by itself alone, code unit by code unit.
  const odd = apiKeys(["odd-\ud800", "plain", "repl-\ufffd"]);
  assert.ok(odd("odd-\ud800"));
  assert.not.ok(odd("odd-\ufffd"), "its UTF-8 form is U+FFFD's: never compared by it");
  assert.not.ok(odd("odd-\udc00"));
  assert.not.ok(odd("odd-"));
  assert.ok(odd("plain"));
  assert.not.ok(odd("plain-"));
  assert.ok(odd("repl-\ufffd"));
  assert.not.ok(odd("repl-\ud800"));
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

test("apiKeys: a plain key answers true; in a store it is every scope, named key: and the start of its digest (never the key)", () => {
  assert.is(apiKeys(["plain-key-1"])("plain-key-1"), true);
  const principal = keyPrincipals(["plain-key-1"])("plain-key-1");
  assert.equal(principal, { id: tokenId("plain-key-1"), scopes: ["pets:read", "pets:write"] });
  assert.match((principal as Principal).id, /^key:[A-Za-z0-9_-]{12}$/);
  assert.not.ok((principal as Principal).id.includes("plain"));
});

test("apiKeys: a named key answers its name and scopes; given as its SHA-256 digest, the same", () => {
  const digest = createHash("sha256").update("ro-key").digest("hex");
  for (const verify of [
    apiKeys([{ name: "shop", key: "ro-key", scopes: ["pets:read"] }]),
    apiKeys([{ name: "shop", sha256: digest, scopes: ["pets:read"] }]),
  ]) {
    assert.equal(verify("ro-key"), { id: "shop", scopes: ["pets:read"] });
    assert.is(verify("ro-kez"), false);
  }
});

test("apiKeys: two keys of one name work side by side (a rotation); an expired key is refused", () => {
  const verify = apiKeys([
    { name: "ci", key: "old-key", expiresAt: Date.now() - 1 },
    { name: "ci", key: "new-key", expiresAt: new Date(Date.now() + 60_000) },
    { name: "ci", key: "other-key" },
  ]);
  assert.is(verify("old-key"), false);
  assert.is((verify("new-key") as Principal).id, "ci");
  assert.is((verify("other-key") as Principal).id, "ci");
});

test("apiKeys: the same key twice, a name that cannot name anyone, a bad digest or scopes are TypeErrors without the key", () => {
  const bad: unknown[][] = [
    ["dup-key", "dup-key"],
    [{ name: "", key: "k" }],
    [{ name: "a\nb", key: "k" }],
    [{ name: "a", sha256: "abc" }],
    [{ name: "a", key: "k", sha256: "0".repeat(64) }],
    [{ name: "a", key: "secret-k", scopes: "pets:read" }],
    [{ name: "a", key: "secret-k", expiresAt: "tomorrow" }],
  ];
  for (const keys of bad) {
    const error = (() => {
      try {
        apiKeys(keys as string[]);
      } catch (e) {
        return e as Error;
      }
    })();
    assert.instance(error, TypeError, JSON.stringify(keys));
    assert.not.ok((error as Error).message.includes("secret-k"));
  }
});

test("apiKeys: with 5,000 named keys each is found (by its digest: one hash per token) and others refused", () => {
  const keys = Array.from({ length: 5000 }, (_, i) => ({ name: `k${i}`, key: `key-number-${i}-${"x".repeat(20)}` }));
  const verify = apiKeys(keys);
  assert.is((verify(`key-number-4999-${"x".repeat(20)}`) as Principal).id, "k4999");
  assert.is((verify(`key-number-0-${"x".repeat(20)}`) as Principal).id, "k0");
  assert.is(verify("j".repeat(256)), false);
});

test.run();
