/**
 * The test kit's `rateLimit`: a test server and a test store answer `429` past the limit, as a real
 * server with PETSTORE_RATE_LIMIT does, and `reset()` starts every count again.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestStore, startTestServer } from "../../testing/index.ts";

test("createTestStore({ rateLimit }): 429 past the limit with the headers; reset() starts the count again", async () => {
  const t = await createTestStore({ rateLimit: { limit: 2, windowSeconds: 3600 } });
  try {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.request("GET", "/v1/pets")).status);
    assert.equal(statuses, [200, 200, 429]);
    const refused = await t.request("GET", "/v1/pets");
    assert.equal(refused.json, {
      code: "rate_limited",
      message: "Too many requests with this API key. Wait the seconds of Retry-After, then try again.",
      status: 429,
    });
    assert.match(refused.headers["retry-after"] ?? "", /^[0-9]+$/);
    const before = t.store;
    await t.reset();
    assert.is.not(t.store, before, "a new store on the same storage");
    const again = await t.request("GET", "/v1/pets");
    assert.is(again.status, 200);
    assert.match(again.headers.ratelimit ?? "", /^"default";r=1;t=[0-9]+$/);
  } finally {
    await t.close();
  }
});

test("startTestServer({ rateLimit }): over a socket too; without it, no RateLimit header", async () => {
  const limited = await startTestServer({ rateLimit: { limit: 1, windowSeconds: 3600 } });
  const plain = await startTestServer();
  try {
    const get = (s: typeof plain) => fetch(`${s.url}/pets`, { headers: { authorization: `Bearer ${s.key}` } });
    const first = await get(limited);
    assert.is(first.headers.get("ratelimit-policy"), '"default";q=1;w=3600');
    assert.is((await get(limited)).status, 429);
    const open = await get(plain);
    assert.is(open.status, 200);
    assert.is(open.headers.get("ratelimit"), null);
    await limited.reset();
    assert.is((await get(limited)).status, 200);
  } finally {
    await limited.close();
    await plain.close();
  }
});

test.run();
