/**
 * The client's retries: what is retried (network failures, time-outs, 503, 429, and for creates 409
 * idempotency_key_in_use) and what never is (any other answer); the back-off's bounds (full
 * jitter, capped, at least Retry-After); the bounds in attempts and in total time; AbortSignal.
 * Time is asserted only as generous bounds, never as a measurement.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createPetStoreClient, isPetStoreError } from "../../client/index.ts";
import { DEFAULT_RETRY, delayBefore, retryAfterMs } from "../../client/retry.ts";
import { memoryStorage, type PetStorage } from "../../lib/entries/storage.ts";
import type { TestServer } from "../../testing/index.ts";
import { createTestStore, startTestServer } from "../../testing/index.ts";

let server: TestServer;
test.before(async () => {
  server = await startTestServer({ pets: 2 });
});
test.before.each(() => server.reset());
test.after(() => server.close());

const client = (options: Partial<Parameters<typeof createPetStoreClient>[0]> = {}) =>
  createPetStoreClient({ baseUrl: server.url, key: server.key, retry: { baseDelayMs: 1 }, ...options });

/** A fetch that answers from `answers` in turn (a function throws or answers), then from the server. */
function scripted(answers: (() => Response | Promise<Response>)[]) {
  let calls = 0;
  const fetch = async (request: Request) => {
    calls++;
    const next = answers.shift();
    return next === undefined ? globalThis.fetch(request) : next();
  };
  return { fetch, calls: () => calls };
}

const unavailable = (retryAfter?: string) => () =>
  new Response('{"code":"storage_unavailable","message":"down","status":503}', {
    status: 503,
    headers: retryAfter === undefined ? {} : { "retry-after": retryAfter },
  });
const networkFailure = () => {
  throw new TypeError("fetch failed");
};

test("delayBefore: full jitter between 0 and min(maxDelayMs, base × 2^(n-1)), and never less than Retry-After", () => {
  const policy = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 };
  assert.is(
    delayBefore(1, undefined, policy, () => 0),
    0,
  );
  assert.is(
    delayBefore(1, undefined, policy, () => 0.999),
    99,
  );
  assert.is(
    delayBefore(3, undefined, policy, () => 0.999),
    399,
  );
  assert.is(
    delayBefore(10, undefined, policy, () => 0.999),
    999,
    "capped",
  );
  assert.is(
    delayBefore(1, 1000, policy, () => 0.5),
    1000,
    "Retry-After is a floor",
  );
});

test("retryAfterMs: delta-seconds and HTTP dates; anything else is no value", () => {
  assert.is(retryAfterMs("1"), 1000);
  assert.is(retryAfterMs(" 3 "), 3000);
  assert.is(retryAfterMs(new Date(10_000).toUTCString(), 8000), 2000);
  assert.is(retryAfterMs("soon"), undefined);
  assert.is(retryAfterMs(null), undefined);
});

test("reads: a 503 from the store is retried after its Retry-After (1 s), and the page arrives", async () => {
  server.failNext(1, { status: 503, operation: "listPets" });
  const started = Date.now();
  const page = await client().listPets();
  assert.is(page.pets.length, 2);
  assert.ok(Date.now() - started >= 950, "waited the Retry-After");
  assert.equal(
    server.requests().map((r) => r.status),
    [503, 200],
  );
});

test("reads: network failures and time-outs are retried; getPet too", async () => {
  const { fetch, calls } = scripted([networkFailure, networkFailure]);
  assert.is((await client({ fetch }).getPet(1)).id, 1);
  assert.is(calls(), 3);
  server.delay(400);
  const slow = client({ timeoutMs: 100, retry: { attempts: 2, baseDelayMs: 1 } });
  const answered = server.requests().length;
  const started = Date.now();
  const error = await slow.listPets().catch((e) => e);
  assert.is(error.name, "TimeoutError");
  assert.ok(Date.now() - started < 3000);
  server.delay(0);
  // The server still answers the two abandoned attempts 400 ms on: wait for them, or they land in
  // the next test's journal.
  for (let i = 0; i < 100 && server.requests().length < answered + 2; i++) await new Promise((r) => setTimeout(r, 50));
  assert.is(server.requests().length, answered + 2, "both attempts reached the server");
});

test("createPet: an answer lost after the commit is retried with the same key and answered with the replay: one pet (HTTP)", async () => {
  server.failNext(1, { after: "commit", operation: "createPet" });
  const rex = await client().createPet({ name: "Rex", categoryId: 1 });
  assert.equal(rex, { id: 3, name: "Rex", categoryId: 1, status: "available" });
  const journal = server.requests();
  assert.equal(
    journal.map((r) => [r.method, r.status, r.replayed, r.lost]),
    [
      ["POST", 201, false, "after-commit"],
      ["POST", 201, true, undefined],
    ],
  );
  assert.is(journal[0]?.idempotencyKey, journal[1]?.idempotencyKey, "the same key on both");
  assert.is((await server.store.listPets()).pets.length, 3, "stored once");
});

test("in process: over createTestStore().fetch, an answer lost after the commit is replayed to the retry: one pet", async () => {
  const t = await createTestStore({ pets: 1 });
  try {
    const pets = createPetStoreClient({ baseUrl: "http://petstore.test/v1", key: t.key, fetch: t.fetch });
    t.failNext(1, { after: "commit" });
    assert.is((await pets.createPet({ name: "Rex", categoryId: 1 })).id, 2);
    assert.equal(
      t.requests().map((r) => [r.status, r.replayed, r.lost]),
      [
        [201, false, "after-commit"],
        [201, true, undefined],
      ],
    );
    assert.is((await t.store.listPets()).pets.length, 2, "stored once");
  } finally {
    await t.close();
  }
});

test("createPet: a connection reset before the request is read is retried: one pet", async () => {
  server.failNext(2, { reset: true });
  const rex = await client().createPet({ name: "Rex", categoryId: 1 });
  assert.is(rex.id, 3);
  assert.equal(
    server.requests().map((r) => [r.status, r.replayed, r.lost]),
    [
      [0, false, "reset"],
      [0, false, "reset"],
      [201, false, undefined],
    ],
  );
});

test("createPet: 409 idempotency_key_in_use (another request with the key still writing) is retried with the same key", async () => {
  const memory = memoryStorage();
  let busy = 2;
  // The backend says what SQL and Redis say while the first request with a key is being written.
  const writing: PetStorage = {
    ...memory,
    kind: memory.kind,
    createOnce: (pet, record) =>
      busy-- > 0
        ? { conflict: "in_use" }
        : (memory.createOnce as NonNullable<PetStorage["createOnce"]>).call(memory, pet, record),
  };
  const own = await startTestServer({ storage: writing });
  try {
    const pets = createPetStoreClient({ baseUrl: own.url, key: own.key, retry: { baseDelayMs: 1 } });
    const started = Date.now();
    const rex = await pets.createPet({ name: "Rex", categoryId: 1 }, { idempotencyKey: "same" });
    assert.equal(rex, { pet: { id: 1, name: "Rex", categoryId: 1, status: "available" }, replayed: false });
    const journal = own.requests();
    assert.equal(
      journal.map((r) => [r.status, r.idempotencyKey]),
      [
        [409, "same"],
        [409, "same"],
        [201, "same"],
      ],
    );
    assert.ok(Date.now() - started >= 1900, "each 409's Retry-After (1 s) was honoured");
  } finally {
    await own.close();
  }
});

test("429 rate_limited: the client waits the Retry-After and retries, a create with the same key: one pet each (a test server with a limit)", async () => {
  const limited = await startTestServer({ rateLimit: { limit: 2, windowSeconds: 1 } });
  try {
    const c = createPetStoreClient({ baseUrl: limited.url, key: limited.key, retry: { baseDelayMs: 1 } });
    // Start in a fresh window, so that the third request, not a later one, meets the limit.
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    const started = Date.now();
    const pets = [];
    for (const name of ["a", "b", "c"]) pets.push(await c.createPet({ name, categoryId: 1 }));
    assert.equal(
      pets.map((p) => [p.id, p.name]),
      [
        [1, "a"],
        [2, "b"],
        [3, "c"],
      ],
    );
    const seen = limited.requests();
    assert.equal(
      seen.map((r) => r.status),
      [201, 201, 429, 201],
    );
    assert.is(seen[3]?.idempotencyKey, seen[2]?.idempotencyKey, "the retry carries the key of the refused create");
    assert.ok(Date.now() - started >= 900, "waited for the next window");
    const page = await c.listPets();
    assert.is(page.pets.length, 3, "a read refused meanwhile would be retried too");
  } finally {
    await limited.close();
  }
});

test("never retried: other 4xx answers, 500, and a rule's 409: one request each", async () => {
  server.failNext(1, { status: 500 });
  const cases: [() => Promise<unknown>, string][] = [
    [() => client().listPets(), "internal_error"],
    [() => client().getPet(999), "pet_not_found"],
    [() => client().createPet({ name: "", categoryId: 1 }), "invalid_body"],
    [() => createPetStoreClient({ baseUrl: server.url, key: "wrong" }).listPets(), "unauthorized"],
  ];
  for (const [call, code] of cases) {
    const before = server.requests().length;
    const error = await call().catch((e) => e);
    assert.ok(isPetStoreError(error, code), `${code}: ${error}`);
    assert.is(server.requests().length - before, 1, `${code} was sent once`);
  }
});

test("bounds: attempts (the last failure is thrown), total time, and a Retry-After past the total ends the call at once", async () => {
  const five = scripted(Array.from({ length: 10 }, () => unavailable()));
  const error = await client({ fetch: five.fetch, retry: { attempts: 3, baseDelayMs: 1 } })
    .listPets()
    .catch((e) => e);
  assert.ok(isPetStoreError(error, "storage_unavailable"));
  assert.is(five.calls(), 3);

  const hanging = scripted(Array.from({ length: 100 }, () => () => new Promise<Response>(() => {})));
  let started = Date.now();
  const timedOut = await client({
    fetch: hanging.fetch,
    timeoutMs: 100,
    retry: { attempts: 100, baseDelayMs: 1, totalMs: 400 },
  })
    .listPets()
    .catch((e) => e);
  const took = Date.now() - started;
  assert.is(timedOut.name, "TimeoutError");
  assert.ok(took >= 300 && took < 3000, `the call ended at its total time, 400 ms (${took} ms)`);
  assert.ok(hanging.calls() >= 3 && hanging.calls() <= 6, `attempts of 100 ms within the total: ${hanging.calls()}`);

  const later = scripted([unavailable("30")]);
  started = Date.now();
  const refused = await client({ fetch: later.fetch, retry: { totalMs: 5000 } })
    .listPets()
    .catch((e) => e);
  assert.ok(isPetStoreError(refused, "storage_unavailable"));
  assert.is(later.calls(), 1);
  assert.ok(Date.now() - started < 2000, "no wait that cannot end in time");
  assert.is(
    (
      await client({ retry: false })
        .listPets()
        .catch((e) => e)
    ).pets.length,
    2,
    "retry: false still sends once",
  );
});

test("AbortSignal: ends a call in flight, in a back-off wait, or before it starts, with the signal's reason, unretried", async () => {
  server.delay(2000);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  let started = Date.now();
  const inFlight = await client()
    .listPets({}, { signal: controller.signal })
    .catch((e) => e);
  assert.is(inFlight.name, "AbortError");
  assert.ok(Date.now() - started < 1500);
  server.delay(0);

  const waiting = new AbortController();
  const retried = scripted([unavailable("5")]);
  setTimeout(() => waiting.abort(new Error("user left")), 100);
  started = Date.now();
  const inWait = await client({ fetch: retried.fetch, retry: { totalMs: 20_000 } })
    .createPet({ name: "Rex", categoryId: 1 }, { signal: waiting.signal })
    .catch((e) => e);
  assert.is(inWait.message, "user left");
  assert.ok(Date.now() - started < 1500);
  assert.is(retried.calls(), 1);

  const before = server.requests().length;
  const aborted = await client()
    .getPet(1, { signal: AbortSignal.abort() })
    .catch((e) => e);
  assert.is(aborted.name, "AbortError");
  assert.is(server.requests().length, before, "nothing sent");
});

test.run();
