/**
 * `failNext(n, { after: "commit" })` and `failNext(n, { reset: true })`, on the test server and the
 * in-process test store: the answer of a request the store carried out is lost (the create is
 * stored), or the connection is closed before the request is read (the store never sees it).
 * Over HTTP the client meets a closed connection; in process the request rejects with a TypeError,
 * as fetch does on a network failure.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { TestServer, TestStore } from "../../testing/index.ts";
import { createTestStore, startTestServer } from "../../testing/index.ts";

const s = suite("testing: lost connections");
const open: { close(): Promise<void> }[] = [];
s.after.each(async () => {
  for (const kit of open.splice(0)) await kit.close();
});
const server = async () => {
  const t = await startTestServer({ pets: 1 });
  open.push(t);
  return t;
};
const store = async () => {
  const t = await createTestStore({ pets: 1 });
  open.push(t);
  return t;
};

const body = JSON.stringify({ name: "Rex", categoryId: 1 });
const post = (t: TestServer) =>
  fetch(`${t.url}/pets`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json", "idempotency-key": "k-1" },
    body,
  });
const names = async (t: TestServer | TestStore) => (await t.store.listPets()).pets.map((p) => p.name);

s(
  'after: "commit" over HTTP: the create is stored, the connection is closed with no answer; the retry gets the replay',
  async () => {
    const t = await server();
    t.failNext(1, { after: "commit" });
    const lost = await post(t).then(
      (r) => `answered ${r.status}`,
      (e: Error) => e,
    );
    assert.instance(lost, TypeError, "fetch met a closed connection");
    assert.equal(await names(t), ["pet-1", "Rex"], "stored before the answer was lost");
    const retry = await post(t);
    assert.is(retry.status, 201);
    assert.is(retry.headers.get("idempotent-replayed"), "true");
    assert.equal(
      t.requests().map((r) => [r.status, r.replayed, r.lost]),
      [
        [201, false, "after-commit"],
        [201, true, undefined],
      ],
    );
  },
);

s(
  'after: "commit" in process: request() and fetch() reject with a TypeError (its cause the injected fault); the pet is stored',
  async () => {
    const t = await store();
    t.failNext(2, { after: "commit", operation: "createPet" });
    const viaRequest = await t.request("POST", "/v1/pets", { body: { name: "Rex", categoryId: 1 } }).catch((e) => e);
    assert.instance(viaRequest, TypeError);
    assert.is((viaRequest.cause as Error).name, "InjectedFault");
    const viaFetch = await t
      .fetch("/v1/pets", {
        method: "POST",
        headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
        body,
      })
      .catch((e) => e);
    assert.instance(viaFetch, TypeError);
    assert.equal(await names(t), ["pet-1", "Rex", "Rex"]);
  },
);

s('after: "commit" loses only answers the store carried out (2xx), of the operation asked for', async () => {
  const t = await store();
  t.failNext(1, { after: "commit", operation: "createPet" });
  assert.is((await t.request("GET", "/v1/pets")).status, 200, "another operation passes");
  assert.is((await t.request("POST", "/v1/pets", { body: { name: "" } })).status, 400, "a refused create passes");
  assert.is((await t.request("GET", "/v1/pets", { headers: { authorization: "Bearer x" } })).status, 401);
  const lost = await t.request("POST", "/v1/pets", { body: { name: "Rex", categoryId: 1 } }).catch((e) => e);
  assert.instance(lost, TypeError, "the first create carried out loses its answer");
  assert.is((await t.request("POST", "/v1/pets", { body: { name: "Max", categoryId: 1 } })).status, 201, "n = 1");
});

s("reset: true over HTTP: the connection is closed before the request is read: nothing is stored", async () => {
  const t = await server();
  t.failNext(1, { reset: true });
  const lost = await post(t).then(
    (r) => `answered ${r.status}`,
    (e: Error) => e,
  );
  assert.instance(lost, TypeError);
  assert.equal(await names(t), ["pet-1"], "the store never saw it");
  assert.is((await post(t)).status, 201);
  assert.equal(
    t.requests().map((r) => [r.method, r.status, r.lost ?? "", r.idempotencyKey]),
    [
      ["POST", 0, "reset", "k-1"],
      ["POST", 201, "", "k-1"],
    ],
  );
});

s("reset: true in process: rejects with a TypeError without reaching the store; operation aims it", async () => {
  const t = await store();
  t.failNext(1, { reset: true, operation: "getPet" });
  assert.is((await t.request("GET", "/v1/pets")).status, 200);
  const lost = await t.request("GET", "/v1/pets/1").catch((e) => e);
  assert.instance(lost, TypeError);
  assert.is((await t.request("GET", "/v1/pets/1")).status, 200);
  t.failNext(1, { reset: true });
  assert.instance(await t.request("GET", "/v1/nowhere").catch((e) => e), TypeError, "without operation: any request");
});

s("failNext: one of status, after or reset, each checked (TypeError); reset() cancels pending losses", async () => {
  const t = await store();
  for (const options of [
    { status: 503, after: "commit" },
    { after: "answer" },
    { reset: false },
    { reset: true, operation: "deletePet" },
    {},
  ]) {
    assert.throws(() => t.failNext(1, options as never), TypeError, JSON.stringify(options));
  }
  t.failNext(5, { reset: true });
  t.failNext(5, { after: "commit" });
  await t.reset();
  assert.is((await t.request("POST", "/v1/pets", { body: { name: "Rex", categoryId: 1 } })).status, 201);
});

s.run();
