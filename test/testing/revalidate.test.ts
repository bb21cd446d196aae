/**
 * The test kit and validators: `request(…, { revalidate: earlier })` sends the earlier answer's
 * ETag and gets the store's 304 while nothing changed; the journal shows the 304; `cacheControl`
 * sets what the kit's store says to caches, over its socket too.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestStore, startTestServer } from "../../testing/index.ts";

test("createTestStore: request(…, { revalidate: earlier }) sends its ETag and gets 304 with no body while unchanged", async () => {
  const t = await createTestStore({ pets: 3 });
  try {
    const first = await t.request("GET", "/v1/pets");
    const again = await t.request("GET", "/v1/pets", { revalidate: first });
    assert.is(again.status, 304);
    assert.is(again.body, "");
    assert.is(again.json, undefined);
    assert.is(again.headers.etag, first.headers.etag);
    await t.store.createPet({ name: "new", categoryId: 1 });
    const changed = await t.request("GET", "/v1/pets", { revalidate: first });
    assert.is(changed.status, 200);
    assert.is((changed.json as unknown[]).length, 4);
    assert.equal(
      t.requests().map((r) => r.status),
      [200, 304, 200],
      "the journal shows the revalidation",
    );
  } finally {
    await t.close();
  }
});

test("createTestStore: revalidate takes an answer with an ETag, else a TypeError says so", async () => {
  const t = await createTestStore();
  try {
    const created = await t.request("POST", "/v1/pets", { body: { name: "Rex", categoryId: 1 } });
    try {
      await t.request("GET", "/v1/pets/1", { revalidate: created });
      assert.unreachable("a create's answer has no ETag");
    } catch (error) {
      assert.instance(error, TypeError);
      assert.match((error as Error).message, /revalidate takes an earlier answer that carries an ETag/);
    }
  } finally {
    await t.close();
  }
});

test("startTestServer({ cacheControl }): the kit's store says what the option says, and answers If-None-Match", async () => {
  const server = await startTestServer({ pets: 3, cacheControl: { petMaxAge: 60 } });
  try {
    const headers = { authorization: `Bearer ${server.key}` };
    const first = await fetch(`${server.url}/pets/1`, { headers });
    assert.is(first.headers.get("cache-control"), "private, max-age=60");
    const etag = first.headers.get("etag") ?? "";
    const again = await fetch(`${server.url}/pets/1`, { headers: { ...headers, "if-none-match": etag } });
    assert.is(again.status, 304);
  } finally {
    await server.close();
  }
});

test.run();
