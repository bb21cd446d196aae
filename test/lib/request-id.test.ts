/** New request ids: random version 4 UUIDs, never repeated, each a string a caller may keep. */

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { newRequestId, uuidOf } from "../../lib/request-id.ts";
import { call, makeStore } from "../support/helpers.ts";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test("newRequestId: 20,000 ids are version 4 UUIDs, all different", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 20_000; i++) {
    const id = newRequestId();
    assert.ok(UUID_V4.test(id), id);
    seen.add(id);
  }
  assert.is(seen.size, 20_000);
});

test("newRequestId: every hex digit turns up in every random position", () => {
  // A digit stuck in a position (a byte written twice, a table off by one) would show here.
  const ids = Array.from({ length: 4000 }, () => newRequestId());
  for (let p = 0; p < 36; p++) {
    if ([8, 13, 18, 23, 14, 19].includes(p)) continue; // dashes, version, variant
    const digits = new Set(ids.map((id) => id[p]));
    assert.is(digits.size, 16, `position ${p}`);
  }
  assert.equal(new Set(ids.map((id) => id[19])), new Set(["8", "9", "a", "b"]));
});

test("handle(): a request without a usable X-Request-Id is answered with a new UUID each time", async () => {
  const store = makeStore();
  const a = await call(store, "GET", "/v1/pets");
  const b = await call(store, "GET", "/v1/pets", { headers: { "x-request-id": "not valid!" } });
  assert.ok(UUID_V4.test(a.headers["x-request-id"] ?? ""), a.headers["x-request-id"]);
  assert.ok(UUID_V4.test(b.headers["x-request-id"] ?? ""), b.headers["x-request-id"]);
  assert.is.not(a.headers["x-request-id"], b.headers["x-request-id"]);
});

test("uuidOf (where crypto.randomUUID is missing): version 4 UUIDs of the bytes, every digit in every position", () => {
  assert.is(uuidOf(new Uint8Array(16)), "00000000-0000-4000-8000-000000000000");
  assert.is(uuidOf(new Uint8Array(16).fill(255)), "ffffffff-ffff-4fff-bfff-ffffffffffff");
  const ids = Array.from({ length: 4000 }, () => uuidOf(globalThis.crypto.getRandomValues(new Uint8Array(16))));
  for (const id of ids) assert.ok(UUID_V4.test(id), id);
  for (let p = 0; p < 36; p++) {
    if ([8, 13, 18, 23, 14, 19].includes(p)) continue;
    assert.is(new Set(ids.map((id) => id[p])).size, 16, `position ${p}`);
  }
});

test("request ids: keeping one id per 1,024 answers for 2,000 batches grows the heap by under 8 MiB", async () => {
  // An id that is a slice of a larger string keeps that string alive: 2,000 kept ids held 70 MiB.
  const child = fileURLToPath(new URL("./request-id-heap-child.ts", import.meta.url));
  const out = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ["--expose-gc", "--import", "tsx", child, "2000"],
      { timeout: 120_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
    );
  });
  const { bytes, kept, distinct, sample } = JSON.parse(out) as {
    bytes: number;
    kept: number;
    distinct: number;
    sample: string;
  };
  assert.is(kept, 2000);
  assert.is(distinct, 2000, "every kept id is another answer's");
  assert.ok(UUID_V4.test(sample), sample);
  assert.ok(bytes < 8 * 1024 * 1024, `heap growth ${(bytes / 1024 / 1024).toFixed(1)} MiB for 2,000 kept ids`);
});

test.run();
