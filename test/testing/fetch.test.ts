/**
 * `createTestStore().fetch`: a standard fetch answered by the in-process store, for code under test
 * that takes one (a string path, a URL or a Request; any origin), with the kit's delay, faults and
 * journal; and the published conformance cases, which pass on it and on the test server,
 * so both answer exactly as the contract says.
 */
import { suite, test } from "uvu";
import * as assert from "uvu/assert";
import { conformanceCases } from "../../conformance/index.ts";
import type { TestServer, TestStore } from "../../testing/index.ts";
import { createTestStore, startTestServer } from "../../testing/index.ts";

test("fetch(): a path, a URL or a Request, answered by the store; the key is sent by the caller", async () => {
  const t = await createTestStore({ pets: 2 });
  try {
    const auth = { authorization: `Bearer ${t.key}` };
    const byPath = await t.fetch("/v1/pets?limit=1", { headers: auth });
    assert.is(byPath.status, 200);
    assert.equal(await byPath.json(), [{ id: 1, name: "pet-1", categoryId: 1, status: "available" }]);
    assert.match(byPath.headers.get("link") ?? "", /rel="next"/);
    const byUrl = await t.fetch(new URL("https://anything.example/v1/pets/2"), { headers: auth });
    assert.is(((await byUrl.json()) as { name: string }).name, "pet-2");
    const created = await t.fetch(
      new Request("http://petstore.test/v1/pets", {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: '{"name":"Rex","categoryId":1}',
      }),
    );
    assert.is(created.status, 201);
    assert.is(created.headers.get("location"), "/v1/pets/3");
    assert.is((await t.fetch("/v1/pets")).status, 401, "no key, no pets");
  } finally {
    await t.close();
  }
});

test("fetch(): the kit's delay, faults and journal apply", async () => {
  const t = await createTestStore({ pets: 1 });
  try {
    const auth = { headers: { authorization: `Bearer ${t.key}` } };
    t.failNext(1, { status: 503 });
    const failed = await t.fetch("/v1/pets", auth);
    assert.is(failed.status, 503);
    assert.is(failed.headers.get("retry-after"), "1");
    t.delay(300);
    const started = Date.now();
    await t.fetch("/v1/pets", auth);
    assert.ok(Date.now() - started >= 290);
    t.delay(0);
    t.failNext(1, { reset: true });
    assert.instance(
      await t.fetch("/v1/pets", auth).catch((e) => e),
      TypeError,
      "a lost connection rejects as fetch does",
    );
    assert.equal(
      t.requests().map((r) => [r.path, r.status]),
      [
        ["/v1/pets", 503],
        ["/v1/pets", 200],
        ["/v1/pets", 0],
      ],
    );
  } finally {
    await t.close();
  }
});

test.run();

let store: TestStore | undefined;
let server: TestServer | undefined;
const conformance = suite("testing: the conformance cases on t.fetch and on startTestServer");
conformance.after(async () => {
  await store?.close();
  await server?.close();
});
for (const c of conformanceCases()) {
  conformance(`t.fetch: ${c.name}`, async () => {
    store ??= await createTestStore();
    const kit = store;
    await c.run({ basePath: "/v1", key: kit.key, reset: () => kit.reset(), fetch: (request) => kit.fetch(request) });
  });
  conformance(`startTestServer: ${c.name}`, async () => {
    server ??= await startTestServer();
    const kit = server;
    await c.run({ basePath: "/v1", key: kit.key, reset: () => kit.reset(), url: new URL(kit.url).origin });
  });
}
conformance.run();
