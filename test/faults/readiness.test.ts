/**
 * Honest readiness (contract 1.3, "Faults stay local"): `ready()` (`GET /readyz`) is true only when
 * a real read of the storage succeeded within the last second; a ping that answers proves nothing
 * of the data. Against a storage of the test's own whose ping always answers and whose reads
 * answer, fail or give an invalid stored value on demand.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Pet } from "../../lib/entries/schemas.ts";
import type { PetStorage } from "../../lib/entries/storage.ts";
import type { PetStoreOptions } from "../../lib/index.ts";
import { createPetStore, PetStoreError } from "../../lib/index.ts";
import { call, KEY } from "../support/helpers.ts";
import { sleep } from "./support.ts";

type Mode = "answer" | "fail" | "invalid";

/** A storage whose ping always resolves and whose reads follow `mode`; `reads` counts its reads. */
function pingsButReads() {
  const state = { mode: "answer" as Mode, reads: 0, pings: 0 };
  const pet: Pet = { id: 1, name: "Rex", categoryId: 1, status: "available" };
  const read = <T>(value: T): Promise<T> => {
    state.reads++;
    if (state.mode === "fail") return Promise.reject(new Error("no such table: petstore_index"));
    if (state.mode === "invalid") return Promise.reject(new PetStoreError("internal_error"));
    return Promise.resolve(value);
  };
  const storage: PetStorage = {
    kind: "pings-but-reads",
    create: async (data) => ({ id: 1, ...data }),
    get: () => read(pet),
    list: () => read([pet]),
    ping: async () => {
      state.pings++;
    },
    close: async () => {},
  };
  return { state, storage };
}

function store(storage: PetStorage, options: Partial<PetStoreOptions> = {}) {
  return createPetStore({ auth: [KEY], storage, onError: () => {}, ...options });
}

const get = (s: ReturnType<typeof store>, path: string) => call(s, "GET", path);

test("readiness: ready() is false when reads fail even though ping answers", async () => {
  const { state, storage } = pingsButReads();
  const s = store(storage, { breaker: false });
  state.mode = "fail";
  assert.is(await s.ready(), false);
  assert.ok(state.reads >= 1, "ready() made a real read");
  assert.is(state.pings, 0, "ready() does not ping");
});

test("readiness: ready() is true again once a read succeeds", async () => {
  const { state, storage } = pingsButReads();
  const s = store(storage, { breaker: false });
  state.mode = "fail";
  assert.is(await s.ready(), false);
  state.mode = "answer";
  assert.is(await s.ready(), true);
});

test("readiness: a request's successful read within the last second answers ready() without another call", async () => {
  const { state, storage } = pingsButReads();
  const s = store(storage);
  assert.is((await get(s, "/v1/pets")).status, 200);
  const before = state.reads;
  assert.is(await s.ready(), true);
  assert.is(state.reads, before, "no read of its own");
  assert.is(state.pings, 0, "and no ping");
});

test("readiness: a read older than a second does not vouch: ready() reads for itself", async () => {
  const { state, storage } = pingsButReads();
  const s = store(storage);
  assert.is((await get(s, "/v1/pets/1")).status, 200);
  await sleep(1100);
  const before = state.reads;
  assert.is(await s.ready(), true);
  assert.is(state.reads, before + 1, "one read of its own");
  state.mode = "fail";
  await sleep(1100);
  assert.is(await s.ready(), false, "and its read decides");
});

test("readiness: a failed read after a good one is believed at once: ready() reads for itself", async () => {
  const { state, storage } = pingsButReads();
  const s = store(storage, { breaker: false });
  assert.is((await get(s, "/v1/pets")).status, 200);
  state.mode = "fail";
  assert.is((await get(s, "/v1/pets")).status, 503);
  assert.is(await s.ready(), false);
});

test("readiness: an invalid stored value (500 internal_error) is an answer of the backend: ready() is true", async () => {
  const { state, storage } = pingsButReads();
  const s = store(storage);
  state.mode = "invalid";
  assert.is((await get(s, "/v1/pets")).status, 500);
  assert.is(await s.ready(), true, "from the request's read");
  await sleep(1100);
  assert.is(await s.ready(), true, "from its own read");
});

test("readiness: ready() is false while the breaker is open, even after a read within the second", async () => {
  const { state, storage } = pingsButReads();
  const s = store(storage, { breaker: { failures: 2, probeIntervalMs: 60_000 } });
  assert.is((await get(s, "/v1/pets")).status, 200);
  state.mode = "fail";
  for (let i = 0; i < 2; i++) assert.is((await get(s, "/v1/pets")).status, 503);
  state.mode = "answer";
  assert.is(await s.ready(), false);
});

test("readiness: probes that come together share one read", async () => {
  const { state, storage } = pingsButReads();
  const s = store(storage);
  const answers = await Promise.all([s.ready(), s.ready(), s.ready()]);
  assert.equal(answers, [true, true, true]);
  assert.is(state.reads, 1);
});

test("readiness: memory storage is ready, from a read", async () => {
  const s = createPetStore({ auth: [KEY], onError: () => {} });
  assert.is(await s.ready(), true);
});

test.run();
