/**
 * Key checks: apiKeys() compares a token with every key (so it never stops at the first match),
 * directly up to 256 characters and through digests beyond, never accepts a near miss on either
 * side of that line, never takes a key from the query string, and survives absurd Authorization
 * headers.
 * No test here measures time: constant time is shown by what the comparison must do, not by a clock.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { apiKeys } from "../../lib/entries/auth.ts";
import { createPetStore } from "../../lib/index.ts";
import { startServer } from "../../server/index.ts";
import { rawExchange, requestHead } from "../fuzz/raw-http.ts";

const KEYS = ["k", "key-two", "x".repeat(32), "🔑-unicode-key", "y".repeat(1000), "Z9_-.~+/=", "last-key"];

test("apiKeys: every key is accepted whatever its position in the list and its length (1 to 1000 characters)", () => {
  for (let rotate = 0; rotate < KEYS.length; rotate++) {
    const keys = [...KEYS.slice(rotate), ...KEYS.slice(0, rotate)];
    const verify = apiKeys(keys);
    for (const key of keys) assert.is(verify(key), true, `key ${key.slice(0, 10)} at position ${keys.indexOf(key)}`);
  }
});

test("apiKeys: near misses of every key are refused (prefix, extension, one character changed, case, whitespace)", () => {
  const verify = apiKeys(KEYS);
  for (const key of KEYS) {
    const misses = [
      key.slice(0, -1),
      `${key}x`,
      `x${key}`,
      key.length > 1 ? `${key.slice(0, -1)}${key.at(-1) === "a" ? "b" : "a"}` : "j",
      key.toUpperCase() === key ? key.toLowerCase() : key.toUpperCase(),
      ` ${key}`,
      `${key}\u0000`,
      `${key}${key}`,
    ].filter((m) => !KEYS.includes(m));
    for (const miss of misses) assert.is(verify(miss), false, `near miss of ${key.slice(0, 10)}: ${miss.slice(0, 12)}`);
  }
  assert.is(verify(""), false);
});

test("apiKeys: tokens of every length from 0 to 2000 are refused, and keys either side of 256 characters match only themselves", () => {
  const verify = apiKeys(["exactly-this-key"]);
  for (let n = 0; n <= 2000; n += 7) assert.is(verify("a".repeat(n)), false);
  assert.is(verify("exactly-this-key"), true);
  // A key shorter than the token repeats in the direct comparison: "abab" must not pass for "ab".
  const short = apiKeys(["ab"]);
  for (const token of ["abab", "aba", "ababab", "a", "b", "ab".repeat(200)]) assert.is(short(token), false, token);
  // 256 characters and less are compared directly, longer through SHA-256: keys around the line.
  const keys = [255, 256, 257].map((n) => "k".repeat(n - 1) + String(n % 10));
  const boundary = apiKeys(keys);
  for (const key of keys) {
    assert.is(boundary(key), true, `key of ${key.length}`);
    for (const miss of [key.slice(0, -1), `${key}k`, `${key.slice(0, -1)}x`, `k${key.slice(1, -1)}`]) {
      assert.is(boundary(miss), false, `${miss.length} characters near the key of ${key.length}`);
    }
  }
});

test("apiKeys: distinct lone surrogates are distinct keys (compared as strings, not as UTF-8 bytes)", () => {
  const verify = apiKeys(["key-\ud800"]);
  assert.is(verify("key-\ud800"), true);
  assert.is(verify("key-\udc00"), false);
  assert.is(verify("key-\ufffd"), false);
});

test("apiKeys: refuses an empty list, an empty key and non-strings at construction", () => {
  assert.throws(() => apiKeys([]));
  assert.throws(() => apiKeys([""]));
  assert.throws(() => apiKeys([1 as unknown as string]));
});

const store = createPetStore({ auth: ["query-key-123456"], onError: () => {} });

for (const query of [
  "api_key=query-key-123456",
  "access_token=query-key-123456",
  "key=query-key-123456",
  "authorization=Bearer%20query-key-123456",
]) {
  test(`auth: a key in the query string (${query.split("=")[0]}) is never accepted: 401`, async () => {
    const res = await store.handle({ method: "GET", path: "/v1/pets", query, headers: {} });
    assert.is(res.status, 401);
    assert.is(JSON.parse(res.body).code, "unauthorized");
  });
}

test("auth: a key in another header (X-Api-Key, Cookie, Proxy-Authorization) is never accepted: 401", async () => {
  for (const [name, value] of [
    ["x-api-key", "query-key-123456"],
    ["cookie", "token=query-key-123456"],
    ["proxy-authorization", "Bearer query-key-123456"],
  ] as const) {
    const res = await store.handle({ method: "GET", path: "/v1/pets", headers: { [name]: value } });
    assert.is(res.status, 401, name);
  }
});

test("auth: Authorization with 10 KB of junk (as the token, as the scheme, binary) gets 401 from handle()", async () => {
  const junk = "\u00ff\u0001%$#".repeat(2048);
  for (const authorization of [`Bearer ${"j".repeat(10_240)}`, "j".repeat(10_240), `Bearer ${junk}`, `${junk} x`]) {
    const res = await store.handle({ method: "GET", path: "/v1/pets", headers: { authorization } });
    assert.is(res.status, 401);
    assert.ok(!res.body.includes("jjjj"), "the junk is not echoed");
  }
});

test("auth: Authorization with 10 KB of junk over a socket gets 401, and the server goes on serving", async () => {
  const server = await startServer({
    port: 0,
    host: "127.0.0.1",
    storage: "memory",
    basePath: "/v1",
    logLevel: "silent",
    apiKeys: ["socket-key-123456"],
  });
  try {
    for (const token of ["j".repeat(10_240), Buffer.from("\u00ff\u00fe".repeat(2560), "latin1").toString("latin1")]) {
      const outcome = await rawExchange(server.port, [
        Buffer.from(
          requestHead("GET", "/v1/pets", [
            ["host", "x"],
            ["authorization", `Bearer ${token}`],
            ["connection", "close"],
          ]),
          "latin1",
        ),
      ]);
      assert.is(outcome.kind, "answer");
      if (outcome.kind === "answer") {
        assert.is(outcome.answer.status, 401);
        assert.is(JSON.parse(outcome.answer.body.toString()).code, "unauthorized");
      }
    }
    const ok = await fetch(`${server.url}/pets`, { headers: { authorization: "Bearer socket-key-123456" } });
    assert.is(ok.status, 200);
  } finally {
    await server.close();
  }
});

test.run();
