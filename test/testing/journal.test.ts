/**
 * `requests()`: the journal of the requests a test server or test store received since the last
 * `reset()`: method, path, query, status, request id, idempotency key, replayed; never the
 * `Authorization` value or a body; at most JOURNAL_LIMIT records.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestStore, startTestServer } from "../../testing/index.ts";
import { JOURNAL_LIMIT, Journal, recordOf } from "../../testing/journal.ts";

test("requests(): each request received, in order, with method, path, query, status, request id, key and replayed", async () => {
  const t = await startTestServer({ pets: 1, key: "secret-key-123" });
  try {
    const auth = { authorization: `Bearer ${t.key}` };
    await fetch(`${t.url}/pets?limit=1&status=sold`, { headers: { ...auth, "x-request-id": "list-1" } });
    const create = {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "idempotency-key": '"q-1"' },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    };
    await fetch(`${t.url}/pets`, create);
    await fetch(`${t.url}/pets`, create);
    await fetch(`${t.url}/pets/1`);
    await fetch(`${t.url}/owners`, { headers: auth });
    const journal = t.requests();
    assert.equal(journal[0], {
      method: "GET",
      path: "/v1/pets",
      query: "limit=1&status=sold",
      status: 200,
      requestId: "list-1",
      replayed: false,
    });
    assert.equal(
      journal.slice(1).map((r) => [r.method, r.path, r.query, r.status, r.idempotencyKey, r.replayed]),
      [
        ["POST", "/v1/pets", "", 201, "q-1", false],
        ["POST", "/v1/pets", "", 201, "q-1", true],
        ["GET", "/v1/pets/1", "", 401, undefined, false],
        ["GET", "/v1/owners", "", 404, undefined, false],
      ],
    );
    assert.ok(journal.every((r) => /^[0-9a-zA-Z._-]+$/.test(r.requestId)));
    const text = JSON.stringify(journal);
    assert.not.match(text, /secret-key-123/, "never the Authorization value");
    assert.not.match(text, /Rex/, "never a body");
    journal.pop();
    assert.is(t.requests().length, 5, "a copy: what a test holds does not change the journal");
    await t.reset();
    assert.equal(t.requests(), [], "cleared by reset()");
  } finally {
    await t.close();
  }
});

test("requests(): the in-process store journals request() and fetch() alike, with sequential ids", async () => {
  const t = await createTestStore({ requestIds: "sequential" });
  try {
    await t.request("GET", "/v1/pets");
    await t.fetch("/v1/pets/7", { headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(
      t.requests().map((r) => [r.path, r.status, r.requestId]),
      [
        ["/v1/pets", 200, "req-1"],
        ["/v1/pets/7", 404, "req-2"],
      ],
    );
    await t.store.createPet({ name: "direct", categoryId: 1 });
    assert.is(t.requests().length, 2, "in-process calls of the store are no requests");
  } finally {
    await t.close();
  }
});

test(`requests(): at most ${JOURNAL_LIMIT} records, the oldest dropped first`, () => {
  const journal = new Journal();
  const request = { method: "GET", path: "/v1/pets", query: "", headers: {} };
  for (let i = 0; i < JOURNAL_LIMIT + 5; i++) journal.add(recordOf({ ...request, query: `n=${i}` }, undefined));
  const list = journal.list();
  assert.is(list.length, JOURNAL_LIMIT);
  assert.is(list[0]?.query, "n=5");
});

test.run();
