/**
 * The client with access tokens and scoped keys: a key function is asked before each attempt (a
 * renewed token reaches the retry), what it gives is checked, and a 403 insufficient_scope is a
 * PetStoreError that is not retried.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createPetStoreClient } from "../../client/index.ts";
import { isPetStoreError } from "../../lib/index.ts";
import { createTestStore } from "../../testing/index.ts";

test("client: a key function is asked before each attempt, so a retry carries the renewed token", async () => {
  const t = await createTestStore({ keys: [{ name: "app", key: "token-2" }] });
  const sent: string[] = [];
  let asked = 0;
  const client = createPetStoreClient({
    baseUrl: "http://petstore.test/v1",
    key: async () => `token-${++asked}`,
    retry: { baseDelayMs: 0, maxDelayMs: 0 },
    fetch: async (request) => {
      sent.push(request.headers.get("authorization") ?? "");
      if (sent.length === 1)
        return new Response('{"code":"storage_unavailable","message":"x","status":503}', { status: 503 });
      return t.fetch(request);
    },
  });
  assert.is((await client.listPets()).pets.length, 0);
  assert.equal(sent, ["Bearer token-1", "Bearer token-2"]);
  await t.close();
});

test("client: a key function that gives no key is a TypeError; a read-only key's create is insufficient_scope, tried once", async () => {
  const t = await createTestStore({ keys: [{ name: "reader", key: "read-key", scopes: ["pets:read"] }] });
  let calls = 0;
  const counted = (request: Request) => {
    calls++;
    return t.fetch(request);
  };
  const reader = createPetStoreClient({ baseUrl: "http://petstore.test/v1", key: () => "read-key", fetch: counted });
  assert.is((await reader.listPets()).pets.length, 0);
  calls = 0;
  try {
    await reader.createPet({ name: "Rex", categoryId: 1 });
    assert.unreachable();
  } catch (error) {
    assert.ok(isPetStoreError(error, "insufficient_scope"), String(error));
    assert.is((error as { status: number }).status, 403);
  }
  assert.is(calls, 1, "a 403 is not retried");
  const broken = createPetStoreClient({ baseUrl: "http://petstore.test/v1", key: () => "", fetch: counted });
  try {
    await broken.listPets();
    assert.unreachable();
  } catch (error) {
    assert.instance(error, TypeError);
  }
  assert.throws(() => createPetStoreClient({ baseUrl: "http://x/v1", key: 5 as unknown as string }), /key must be/);
  await t.close();
});

test("test kit: named keys with scopes: a read-only key is 403 insufficient_scope on create; the test key holds every scope", async () => {
  const t = await createTestStore({ keys: [{ name: "reader", key: "read-key", scopes: ["pets:read"] }] });
  const refused = await t.request("POST", "/v1/pets", {
    body: { name: "Rex", categoryId: 1 },
    headers: { authorization: "Bearer read-key" },
  });
  assert.is(refused.status, 403);
  assert.is((refused.json as { code?: string }).code, "insufficient_scope");
  assert.is(
    (await t.request("POST", "/v1/pets", { body: { name: "Rex", categoryId: 1 } })).status,
    201,
    "the test key holds every scope",
  );
  await t.close();
});

test.run();
