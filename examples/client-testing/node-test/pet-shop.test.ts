/**
 * The shop's tests with Node's own runner. Run: node --import tsx --test examples/client-testing/node-test/pet-shop.test.ts
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, test } from "node:test";
import type { TestServer } from "../../../testing/index.ts";
import { createTestStore, startTestServer } from "../../../testing/index.ts";
import { petShop } from "../pet-shop.ts";

let server: TestServer;
before(async () => {
  server = await startTestServer({ pets: 60 });
});
beforeEach(() => server.reset());
after(() => server.close());

test("lists every pet for sale, page after page", async () => {
  assert.equal((await petShop({ baseUrl: server.url, key: server.key }).forSale()).length, 60);
  assert.equal(server.requests().length, 2);
});

test("a delivery whose answer was lost after the commit is stored once", async () => {
  server.failNext(1, { after: "commit" });
  assert.equal((await petShop({ baseUrl: server.url, key: server.key }).receive("7", "Rex", 2)).id, 61);
  assert.deepEqual(
    server.requests().map((r) => r.replayed),
    [false, true],
  );
});

test("a storage outage (503) is waited out", async () => {
  server.failNext(1, { status: 503, operation: "listPets" });
  assert.equal((await petShop({ baseUrl: server.url, key: server.key }).forSale()).length, 60);
});

test("in process, through a test store's fetch", async () => {
  const t = await createTestStore({ pets: 3 });
  t.failNext(1, { reset: true });
  const shop = petShop({ baseUrl: "http://petstore.test/v1", key: t.key, fetch: t.fetch });
  assert.deepEqual(await shop.forSale(), ["pet-1", "pet-2", "pet-3"]);
  await t.close();
});
