/**
 * The storage breaker (`createPetStore({ breaker })`, contract 1.2 "Failing fast"): after a run of
 * failed storage calls the store answers 503 at once, lets probes through, closes on the first
 * success; one slow call never opens it; readiness says not ready while it is open; observe and
 * onChange hear of each change; `false` turns it off; memory storage has none. Against a storage
 * of the test's own whose calls hang, fail or answer on demand.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { BreakerObservation, Observation } from "../../lib/entries/observe.ts";
import type { Pet } from "../../lib/entries/schemas.ts";
import type { PetStorage } from "../../lib/entries/storage.ts";
import type { PetStoreOptions } from "../../lib/index.ts";
import { createPetStore, PetStoreError } from "../../lib/index.ts";
import { call, errorOf, KEY } from "../support/helpers.ts";

type Mode = "answer" | "hang" | "fail" | "invalid";

/** A storage whose calls follow `mode`: answer, hang (never settle), fail (a lost connection) or answer an invalid value. */
function switchable() {
  const state = { mode: "answer" as Mode, calls: 0, hanging: [] as (() => void)[] };
  const respond = <T>(value: T): Promise<T> => {
    state.calls++;
    switch (state.mode) {
      case "hang":
        return new Promise<T>((resolve) => state.hanging.push(() => resolve(value)));
      case "fail":
        return Promise.reject(new Error("connection lost"));
      case "invalid":
        return Promise.reject(new PetStoreError("internal_error"));
      default:
        return Promise.resolve(value);
    }
  };
  const pet: Pet = { id: 1, name: "Rex", categoryId: 1, status: "available" };
  const storage: PetStorage = {
    kind: "switchable",
    create: (data) => respond({ id: 1, ...data }),
    get: () => respond(pet),
    list: () => respond([pet]),
    ping: () => respond(undefined),
    close: async () => {},
  };
  /** Lets every hanging call answer (late). */
  const release = () => {
    for (const resolve of state.hanging.splice(0)) resolve();
  };
  return { state, storage, release };
}

const TIMEOUT = 40;

function store(storage: PetStorage, options: Partial<PetStoreOptions> = {}) {
  return createPetStore({ auth: [KEY], storage, operationTimeoutMs: TIMEOUT, onError: () => {}, ...options });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("breaker: one slow call (a time-out) does not open it: the next call reaches the storage", async () => {
  const { state, storage, release } = switchable();
  const s = store(storage);
  state.mode = "hang";
  assert.is((await call(s, "GET", "/v1/pets")).status, 503);
  state.mode = "answer";
  const before = state.calls;
  assert.is((await call(s, "GET", "/v1/pets")).status, 200);
  assert.is(state.calls, before + 1);
  release();
});

test("breaker: 5 failed calls in a row open it: the next answer is 503 storage_unavailable with Retry-After: 1, at once, without a storage call", async () => {
  const { state, storage } = switchable();
  const s = store(storage);
  state.mode = "fail";
  for (let i = 0; i < 5; i++) assert.is((await call(s, "GET", "/v1/pets")).status, 503);
  const before = state.calls;
  const response = await call(s, "GET", "/v1/pets/1");
  assert.is(response.status, 503);
  assert.is(errorOf(response).code, "storage_unavailable");
  assert.is(response.headers["retry-after"], "1");
  assert.is(response.headers.deprecation, "@1795564800", "the route's own headers, as on any 503");
  assert.is(state.calls, before, "the storage was not called");
});

test("breaker: time-outs count too: 5 in a row open it, and the 6th call does not wait", async () => {
  const { state, storage, release } = switchable();
  const s = store(storage);
  state.mode = "hang";
  await Promise.all(Array.from({ length: 5 }, () => call(s, "GET", "/v1/pets")));
  const before = state.calls;
  assert.is((await call(s, "POST", "/v1/pets", { body: '{"name":"Rex","categoryId":1}' })).status, 503);
  assert.is(state.calls, before, "answered without a storage call");
  release();
});

test("breaker: a success between failures starts the run again (4 failures, a success, 4 failures: still closed)", async () => {
  const { state, storage } = switchable();
  const s = store(storage);
  for (const mode of ["fail", "answer", "fail"] as const) {
    state.mode = mode;
    for (let i = 0; i < (mode === "answer" ? 1 : 4); i++) await call(s, "GET", "/v1/pets");
  }
  state.mode = "answer";
  const before = state.calls;
  assert.is((await call(s, "GET", "/v1/pets")).status, 200);
  assert.is(state.calls, before + 1);
});

test("breaker: while open one probe per probeIntervalMs reaches the storage, and the first success closes it", async () => {
  const { state, storage } = switchable();
  const s = store(storage, { breaker: { probeIntervalMs: 100 } });
  state.mode = "fail";
  for (let i = 0; i < 5; i++) await call(s, "GET", "/v1/pets");
  const opened = state.calls;
  for (let i = 0; i < 10; i++) await call(s, "GET", "/v1/pets");
  assert.is(state.calls, opened, "no call within the interval");
  await sleep(120);
  assert.is((await call(s, "GET", "/v1/pets")).status, 503, "the probe fails: still open");
  assert.is(state.calls, opened + 1, "one probe");
  assert.is((await call(s, "GET", "/v1/pets")).status, 503);
  assert.is(state.calls, opened + 1, "the next probe waits for the interval");
  state.mode = "answer";
  await sleep(120);
  assert.is((await call(s, "GET", "/v1/pets")).status, 200, "the probe succeeds");
  for (let i = 0; i < 3; i++) assert.is((await call(s, "GET", "/v1/pets")).status, 200, "closed again");
});

test("breaker: at most 3 probes wait on a backend that hangs; a call that answers after its time-out closes it", async () => {
  const { state, storage, release } = switchable();
  const s = store(storage, { breaker: { probeIntervalMs: 1 } });
  state.mode = "fail";
  for (let i = 0; i < 5; i++) await call(s, "GET", "/v1/pets");
  state.mode = "hang";
  const opened = state.calls;
  const answers = [];
  for (let i = 0; i < 8; i++) {
    await sleep(3);
    answers.push(call(s, "GET", "/v1/pets"));
  }
  assert.is(state.calls, opened + 3, "three probes in flight, the others refused at once");
  await Promise.all(answers);
  state.mode = "answer";
  release(); // the hung probes answer, late
  await sleep(5);
  const before = state.calls;
  assert.is((await call(s, "GET", "/v1/pets")).status, 200);
  assert.is(state.calls, before + 1, "closed: the call reached the storage");
});

test("breaker: an invalid stored value (500 internal_error) says nothing about the backend: it never opens", async () => {
  const { state, storage } = switchable();
  const s = store(storage);
  state.mode = "invalid";
  for (let i = 0; i < 10; i++) assert.is((await call(s, "GET", "/v1/pets")).status, 500);
  const before = state.calls;
  await call(s, "GET", "/v1/pets");
  assert.is(state.calls, before + 1);
});

test("breaker: ready() is false while open; ready() itself probes, so readiness comes back with the backend", async () => {
  const { state, storage } = switchable();
  const s = store(storage, { breaker: { probeIntervalMs: 50 } });
  state.mode = "fail";
  for (let i = 0; i < 5; i++) await call(s, "GET", "/v1/pets");
  state.mode = "answer";
  assert.is(await s.ready(), false, "open, no probe due yet");
  await sleep(70);
  assert.is(await s.ready(), true, "the probe succeeded");
  assert.is((await call(s, "GET", "/v1/pets")).status, 200);
});

test("breaker: observe and onChange are told when it opens and when it closes", async () => {
  const { state, storage } = switchable();
  const observed: Observation[] = [];
  const changes: BreakerObservation[] = [];
  const s = store(storage, {
    observe: (o) => observed.push(o),
    breaker: { probeIntervalMs: 20, onChange: (c) => changes.push(c) },
  });
  state.mode = "fail";
  for (let i = 0; i < 6; i++) await call(s, "GET", "/v1/pets");
  state.mode = "answer";
  await sleep(30);
  await call(s, "GET", "/v1/pets");
  const expected = [
    { kind: "breaker", state: "open", backend: "switchable", failures: 5, cause: "connection lost" },
    { kind: "breaker", state: "closed", backend: "switchable", failures: 0 },
  ];
  assert.equal(changes, expected);
  assert.equal(
    observed.filter((o) => o.kind === "breaker"),
    expected,
  );
  const storageCalls = observed.filter((o) => o.kind === "storage").length;
  assert.is(storageCalls, 6, "the refused call is no storage call: 5 failures and the probe observed");
});

test("breaker: failures sets the run that opens it; breaker: false turns it off (every call waits its time-out)", async () => {
  const tuned = switchable();
  const s = store(tuned.storage, { breaker: { failures: 2 } });
  tuned.state.mode = "fail";
  await call(s, "GET", "/v1/pets");
  await call(s, "GET", "/v1/pets");
  const opened = tuned.state.calls;
  await call(s, "GET", "/v1/pets");
  assert.is(tuned.state.calls, opened, "open after 2");

  const off = switchable();
  const plain = store(off.storage, { breaker: false });
  off.state.mode = "fail";
  for (let i = 0; i < 20; i++) await call(plain, "GET", "/v1/pets");
  assert.is(off.state.calls, 20, "every call reached the storage");
});

test("breaker: memory storage has none (nothing to wait on), and bad options are a TypeError", async () => {
  const changes: unknown[] = [];
  const memory = createPetStore({ auth: [KEY], breaker: { onChange: (c) => changes.push(c) } });
  for (let i = 0; i < 10; i++) assert.is((await call(memory, "GET", "/v1/pets/99")).status, 404);
  assert.equal(changes, []);
  for (const [breaker, message] of [
    [{ failures: 0 }, /breaker\.failures must be a positive integer/],
    [{ probeIntervalMs: 1.5 }, /breaker\.probeIntervalMs must be a positive integer/],
    [{ onChange: "log" }, /breaker\.onChange must be a function/],
    [{ failure: 3 }, /createPetStore: breaker: unknown option "failure"/],
    [true, /createPetStore: breaker: options must be an object/],
  ] as const) {
    assert.throws(() => createPetStore({ auth: [KEY], breaker: breaker as never }), message);
  }
});

test.run();
