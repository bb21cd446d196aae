/**
 * The shop's tests with uvu, against a real Pet Store test server (started once, reset before each
 * test) and, in process, a test store's fetch. Run: npx uvu -r tsx examples/client-testing/uvu '\.test\.ts$'
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { TestServer } from "../../../testing/index.ts";
import { createTestStore, startTestServer } from "../../../testing/index.ts";
import { petShop } from "../pet-shop.ts";

const shop = suite<{ server: TestServer }>("pet shop");
shop.before(async (context) => {
  context.server = await startTestServer({ pets: 60 });
});
shop.before.each(({ server }) => server.reset()); // 60 pets again, ids from 1, no fault, empty journal
shop.after(({ server }) => server.close());

shop("lists every pet for sale, page after page", async ({ server }) => {
  const names = await petShop({ baseUrl: server.url, key: server.key }).forSale();
  assert.is(names.length, 60);
  assert.is(server.requests().length, 2, "two pages of 50");
});

shop("a delivery whose answer was lost after the commit is stored once", async ({ server }) => {
  server.failNext(1, { after: "commit" });
  const pet = await petShop({ baseUrl: server.url, key: server.key }).receive("7", "Rex", 2);
  assert.is(pet.id, 61);
  assert.equal(
    server.requests().map((r) => [r.idempotencyKey, r.status, r.replayed]),
    [
      ["order-7", 201, false],
      ["order-7", 201, true],
    ],
  );
  assert.is((await server.store.listPets({ limit: 100 })).pets.length, 61);
});

shop("a storage outage (503) is waited out", async ({ server }) => {
  server.failNext(1, { status: 503, operation: "listPets" });
  assert.is((await petShop({ baseUrl: server.url, key: server.key }).forSale()).length, 60);
});

shop("in process, through a test store's fetch", async () => {
  const t = await createTestStore({ pets: 3 });
  t.failNext(1, { reset: true });
  const names = await petShop({ baseUrl: "http://petstore.test/v1", key: t.key, fetch: t.fetch }).forSale();
  assert.equal(names, ["pet-1", "pet-2", "pet-3"]);
  await t.close();
});

shop.run();
