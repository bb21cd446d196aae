/** New request ids: random version 4 UUIDs, never repeated, across the refills of their random pool. */

import { test } from "uvu";
import * as assert from "uvu/assert";
import { newRequestId } from "../../lib/request-id.ts";
import { call, makeStore } from "../support/helpers.ts";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test("newRequestId: 20,000 ids (five fills of the pool) are version 4 UUIDs, all different", () => {
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

test.run();
