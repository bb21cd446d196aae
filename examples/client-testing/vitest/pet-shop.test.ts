/**
 * The shop's tests with Vitest (no configuration needed). Run: npx vitest run --root examples/client-testing/vitest
 */
import { afterAll, beforeAll, beforeEach, expect, test } from "vitest";
import type { TestServer } from "../../../testing/index.ts";
import { createTestStore, startTestServer } from "../../../testing/index.ts";
import { petShop } from "../pet-shop.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ pets: 60 });
});
beforeEach(() => server.reset());
afterAll(() => server.close());

test("lists every pet for sale, page after page", async () => {
  expect(await petShop({ baseUrl: server.url, key: server.key }).forSale()).toHaveLength(60);
  expect(server.requests()).toHaveLength(2);
});

test("a delivery whose answer was lost after the commit is stored once", async () => {
  server.failNext(1, { after: "commit" });
  expect((await petShop({ baseUrl: server.url, key: server.key }).receive("7", "Rex", 2)).id).toBe(61);
  expect(server.requests().map((r) => r.replayed)).toEqual([false, true]);
});

test("a storage outage (503) is waited out", async () => {
  server.failNext(1, { status: 503, operation: "listPets" });
  expect(await petShop({ baseUrl: server.url, key: server.key }).forSale()).toHaveLength(60);
});

test("in process, through a test store's fetch", async () => {
  const t = await createTestStore({ pets: 3 });
  t.failNext(1, { reset: true });
  const shop = petShop({ baseUrl: "http://petstore.test/v1", key: t.key, fetch: t.fetch });
  expect(await shop.forSale()).toEqual(["pet-1", "pet-2", "pet-3"]);
  await t.close();
});
