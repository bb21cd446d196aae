/**
 * The front end's API code tested in Node against the mock: `msw/node` intercepts its `fetch` and
 * the Pet Store answers. Each test starts from the seeded store (`store.reset()`).
 */
import { setupServer } from "msw/node";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { addPet, listPets } from "./api.ts";
import { KEY, petStoreMock } from "./mocks.ts";

let mock: Awaited<ReturnType<typeof petStoreMock>>;
let server: ReturnType<typeof setupServer>;

test.before(async () => {
  mock = await petStoreMock();
  server = setupServer(...mock.handlers);
  server.listen();
});
test.before.each(() => mock.store.reset());
test.after(async () => {
  server.close();
  await mock.store.close();
});

test("listPets: the seeded pets, a page at a time, with the next page's link and a request id", async () => {
  const page = await listPets(KEY);
  assert.equal(page.names, ["Rex", "Tom"]);
  assert.match(page.next ?? "", /^\/v1\/pets\?limit=2&cursor=/);
  assert.ok(page.requestId);
});

test("addPet: a retry with the same Idempotency-Key is a replay, not a second pet", async () => {
  const first = await addPet(KEY, { name: "Nemo", categoryId: 4 }, "add-nemo-1");
  const retry = await addPet(KEY, { name: "Nemo", categoryId: 4 }, "add-nemo-1");
  assert.equal([first.status, retry.status, retry.replayed, retry.id], [201, 201, true, first.id]);
  assert.equal((await listPets(KEY, 10)).names, ["Rex", "Tom", "Kiki", "Nemo"]);
});

test("listPets: a storage outage (failNext) is an error the UI can show", async () => {
  mock.store.failNext(1, { status: 503 });
  const failed = await listPets(KEY).catch((error: Error) => error.message);
  assert.is(failed, "listPets: 503 storage_unavailable");
  assert.equal((await listPets(KEY)).names, ["Rex", "Tom"], "the next request is answered");
});

test("reset: the pet added by an earlier test is gone", async () => {
  assert.equal((await listPets(KEY, 10)).names, ["Rex", "Tom", "Kiki"]);
});

test.run();
