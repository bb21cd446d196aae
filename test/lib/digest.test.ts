/**
 * Digests (lib/digest.ts): Node's crypto.hash where the runtime has one, else the package's own portable SHA (lib/sha.ts), the
 * path a browser runs; both give the same digests. Without `process.getBuiltinModule` the core
 * still hashes (portable) and the storage drivers still load (node:module by a dynamic import).
 */

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DIGESTS, portableHash, sha1Hex, sha256Base64url, sha256Hex, toBase64url } from "../../lib/digest.ts";
import { ROOT } from "../support/program.ts";

const TEXTS = [
  "",
  "a",
  "Rex",
  "héllo wörld ✓ 🐕",
  "x".repeat(1000),
  // Every length around the padding's edges (55, 56, 63, 64 bytes and on).
  ...Array.from({ length: 140 }, (_, i) => "p".repeat(i)),
  '{"name":"Rex","categoryId":1,"status":"available"}',
];

test("digests: on Node the native crypto.hash computes them (a keyed create costs under a microsecond)", () => {
  assert.is(DIGESTS, "node");
});

test("digests: the portable SHA-256 and SHA-1 (what a browser runs) gives Node's SHA-256 and SHA-1, hex and base64url, for every text", () => {
  for (const text of TEXTS) {
    const sha256 = createHash("sha256").update(text).digest();
    assert.is(portableHash("sha256", text, "hex"), sha256.toString("hex"), text);
    assert.is(portableHash("sha256", text, "base64url"), sha256.toString("base64url"), text);
    assert.is(portableHash("sha1", text, "hex"), createHash("sha1").update(text).digest("hex"), text);
    assert.is(sha256Hex(text), sha256.toString("hex"));
    assert.is(sha256Base64url(text), sha256.toString("base64url"));
    assert.is(sha1Hex(text), createHash("sha1").update(text).digest("hex"));
  }
});

test("digests: toBase64url is Node's base64url for every length from 0 to 40 bytes", () => {
  for (let length = 0; length <= 40; length++) {
    const bytes = Uint8Array.from({ length }, (_, i) => (i * 97 + length * 31) % 256);
    assert.is(toBase64url(bytes), Buffer.from(bytes).toString("base64url"), `${length} bytes`);
  }
});

test("digests: without process.getBuiltinModule the core hashes with its portable SHA (same keys, same replays) and the drivers' node:module still loads", () => {
  const script = `
    const { DIGESTS } = await import("./lib/digest.ts");
    const { createPetStore, apiKeys, scopeOf } = await import("./lib/index.ts");
    const { loadNodeBuiltin } = await import("./lib/node-builtin.ts");
    const store = createPetStore({ auth: apiKeys(["k".repeat(300)]) });
    const post = (key) => store.handle({ method: "POST", path: "/v1/pets", headers: {
      authorization: "Bearer " + "k".repeat(300), "content-type": "application/json", "idempotency-key": key },
      body: '{"name":"Rex","categoryId":1}' });
    const first = await post("abc");
    const again = await post("abc");
    const { createRequire } = await loadNodeBuiltin("node:module");
    console.log(JSON.stringify({ DIGESTS, statuses: [first.status, again.status],
      replayed: again.headers["idempotent-replayed"], scope: scopeOf("t"), require: typeof createRequire }));`;
  const run = spawnSync(
    process.execPath,
    ["--import", "tsx", "--import", "./test/support/without-builtins.ts", "--input-type=module", "-e", script],
    { cwd: ROOT, encoding: "utf8", timeout: 30_000 },
  );
  assert.is(run.status, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout), {
    DIGESTS: "portable",
    statuses: [201, 201],
    replayed: "true",
    scope: createHash("sha256").update("t").digest("base64url"),
    require: "function",
  });
});

test.run();
