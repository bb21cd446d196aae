/**
 * Property-based fuzzing of handle(): thousands of generated requests, valid and hostile, in
 * concurrent batches, against two stores (the default 64 KiB body limit, and a 1 MiB one that lets
 * 100,000-level JSON reach the parser), with the storage now and then down or hung.
 * Reproduce a failure with the FUZZ_SEED it prints.
 */
import fc from "fast-check";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { memoryStorage } from "../../lib/entries/storage.ts";
import type { PetStore, PetStoreRequest } from "../../lib/index.ts";
import { createPetStore, isPetStoreError } from "../../lib/index.ts";
import type { Answer, Ledger, Sent, StorageMode } from "./oracle.ts";
import { checkAnswer, checkRank, checkWalk, switchableStorage } from "./oracle.ts";
import type { FuzzCase } from "./requests.ts";
import { bodyBytes, caseArb, FUZZ_KEY, FUZZ_SEED, headerValue, toHandleRequest } from "./requests.ts";
import { fuzzFailure, prototypeSnapshot, unhandledRejections } from "./watch.ts";

const MIN_REQUESTS = 5000;

interface Target {
  store: PetStore;
  setStorage(mode: StorageMode): void;
  ledger: Ledger;
  maxBodyBytes: number;
}

function target(maxBodyBytes: number, errors: unknown[]): Target {
  const switchable = switchableStorage(memoryStorage());
  const store = createPetStore({
    storage: switchable.storage,
    auth: [FUZZ_KEY, "another-key-of-a-different-length"],
    maxBodyBytes,
    operationTimeoutMs: 15, // a hung storage answers 503 after this
    // The oracle expects the storage's state to decide each answer: no breaker carries an outage over
    // (test/lib/breaker.test.ts proves the breaker).
    breaker: false,
    // Outages of the failing storages are reported too (storage_unavailable): only anything else is unexpected.
    onError: (error) => (isPetStoreError(error, "storage_unavailable") ? undefined : errors.push(error)),
  });
  return { store, setStorage: switchable.set, ledger: new Map(), maxBodyBytes };
}

/** What the oracle needs to know of the request handle() received. */
function sentOf(c: FuzzCase, request: PetStoreRequest, t: Target, storage: StorageMode): Sent {
  const bytes = bodyBytes(c.body);
  const header = (name: string) => {
    const pair = c.headers.find(([n]) => n === name);
    return pair === undefined ? undefined : headerValue(pair[1], name, bytes);
  };
  let path = c.path;
  let query = c.query ?? "";
  const q = path.indexOf("?");
  if (q !== -1) {
    if (c.query === null) query = path.slice(q + 1);
    path = path.slice(0, q);
  }
  return {
    method: request.method,
    path,
    query,
    authorization: header("authorization"),
    requestId: header("x-request-id"),
    contentType: header("content-type"),
    contentLength: header("content-length"),
    body: bytes,
    bodyIsBytes: c.bodyAs !== "string",
    storage,
    maxBodyBytes: t.maxBodyBytes,
    key: FUZZ_KEY,
    exactPost: true,
    idempotencyKey: header("idempotency-key"),
  };
}

const batchArb = fc.record({
  storage: fc.oneof(
    { weight: 90, arbitrary: fc.constant<StorageMode>("up") },
    { weight: 7, arbitrary: fc.constant<StorageMode>("down") },
    { weight: 3, arbitrary: fc.constant<StorageMode>("hang") },
  ),
  bigBodies: fc.boolean(),
  cases: fc.array(caseArb, { minLength: 10, maxLength: 20 }),
});

test(`fuzz handle(): >= ${MIN_REQUESTS} hostile requests all get a contract answer, and the walk shows exactly the 201s (FUZZ_SEED=${FUZZ_SEED})`, async () => {
  const errors: unknown[] = [];
  const targets = [target(64 * 1024, errors), target(1024 * 1024, errors)] as const;
  const before = prototypeSnapshot();
  const rejections = unhandledRejections();
  let requests = 0;
  const statuses: Record<number, number> = {};

  const property = fc.asyncProperty(batchArb, async ({ storage, bigBodies, cases }) => {
    const t = bigBodies ? targets[1] : targets[0];
    t.setStorage(storage);
    try {
      // A batch runs concurrently, as a server's requests do; the oracle checks in order after.
      const requestsOfBatch = cases.map((c) => toHandleRequest(c));
      const answers = await Promise.all(requestsOfBatch.map((r) => t.store.handle(r)));
      const sent = cases.map((c, i) => sentOf(c, requestsOfBatch[i] as PetStoreRequest, t, storage));
      // Creations first, so that a concurrent read of a new pet finds it in the ledger.
      const order = [...sent.keys()].sort(
        (a, b) => checkRank(sent[a] as Sent, answers[a] as Answer) - checkRank(sent[b] as Sent, answers[b] as Answer),
      );
      const before = new Set(t.ledger.keys());
      let inFlight: Set<number> | undefined;
      for (const i of order) {
        const answer = answers[i] as Answer;
        const s = sent[i] as Sent;
        if (s.method !== "POST" && inFlight === undefined) {
          inFlight = new Set([...t.ledger.keys()].filter((id) => !before.has(id)));
        }
        requests++;
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        checkAnswer(s, answer, t.ledger, inFlight);
      }
    } finally {
      t.setStorage("up");
    }
  });
  try {
    await fc.assert(property, { seed: FUZZ_SEED, numRuns: Math.ceil(MIN_REQUESTS / 10), endOnFailure: true });
  } catch (error) {
    throw fuzzFailure(error, "handle");
  } finally {
    rejections.stop();
  }

  assert.ok(requests >= MIN_REQUESTS, `only ${requests} requests were generated`);
  console.log(`  handle fuzz: ${requests} requests (FUZZ_SEED=${FUZZ_SEED}), statuses ${JSON.stringify(statuses)}`);
  for (const t of targets) {
    await checkWalk(async (url) => {
      const q = url.indexOf("?");
      return t.store.handle({
        method: "GET",
        path: url.slice(0, q),
        query: url.slice(q + 1),
        headers: { authorization: `Bearer ${FUZZ_KEY}` },
      });
    }, t.ledger);
    await t.store.close();
  }
  assert.ok(targets[0].ledger.size > 100 && targets[1].ledger.size > 100, "too few pets were created to prove much");
  assert.equal(errors, [], "no unexpected error reached onError");
  assert.equal(rejections.seen, [], "no unhandled rejection");
  assert.equal(prototypeSnapshot(), before, "no prototype was polluted");
  assert.is(({} as Record<string, unknown>).polluted, undefined);
});

test.run();
