/**
 * Faults stay local: a stored record that is not what a store writes costs the request that meets
 * it a `500 internal_error`, reported once per key per minute with backend, key and reason (never
 * the value), and never counts toward the breaker; every other pet stays readable. On every
 * persistent backend, with records planted around the store.
 */
import { randomUUID } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { InvalidRecordError } from "../../lib/entries/storage.ts";
import type { PetStore, PetStoreResponse } from "../../lib/index.ts";
import { createPetStore, isPetStoreError } from "../../lib/index.ts";
import type { BreakerObservation } from "../../lib/observe.ts";
import { StorageWarning } from "../../lib/storage/failures.ts";
import type { Backend } from "../storage/backends.ts";
import { backends, keyvJson } from "../storage/backends.ts";

const KEY = "bad-records-key-0123456789";
/** A name planted in bad values: it must never reach a log or an answer. */
const SECRET = "Secret-Value-7f3a";

/** Values a store never writes, each with what makes it bad. */
const BAD_VALUES = (id: number): [string, string][] => [
  ["not JSON", `{"value":${SECRET}`],
  ["not a Pet", keyvJson({ id, name: SECRET, categoryId: "one", status: "available" })],
  ["a name over 200 characters", keyvJson({ id, name: `${SECRET}${"x".repeat(201)}`, categoryId: 1, status: "sold" })],
  ["a name of spaces", keyvJson({ id, name: "   ", categoryId: 1, status: "sold", note: SECRET })],
  ["another pet's id", keyvJson({ id: id + 1000, name: SECRET, categoryId: 1, status: "sold" })],
  ["a JSON string", keyvJson(SECRET)],
];

interface Opened {
  store: PetStore;
  reports: unknown[];
  breaker: BreakerObservation[];
  ns: string;
}

const opened: { backend: Backend; ns: string }[] = [];

async function open(backend: Backend): Promise<Opened> {
  const ns = `bad_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  opened.push({ backend, ns });
  const reports: unknown[] = [];
  const breaker: BreakerObservation[] = [];
  const store = createPetStore({
    storage: await backend.open(ns),
    auth: [KEY],
    onError: (error) => reports.push(error),
    breaker: { failures: 2, onChange: (change) => breaker.push(change) },
  });
  return { store, reports, breaker, ns };
}

const get = (store: PetStore, path: string): Promise<PetStoreResponse> =>
  store.handle({ method: "GET", path, headers: { authorization: `Bearer ${KEY}` } });

const codeOf = (response: PetStoreResponse) => (JSON.parse(String(response.body)) as { code: string }).code;

/** The invalid records among the reports. */
const recordsIn = (reports: unknown[]) =>
  reports.map((r) => (isPetStoreError(r) ? r.cause : r)).filter((r) => r instanceof InvalidRecordError);

test.after(async () => {
  const byBackend = new Map<Backend, string[]>();
  for (const { backend, ns } of opened) byBackend.set(backend, [...(byBackend.get(backend) ?? []), ns]);
  for (const [backend, namespaces] of byBackend) await backend.cleanup(namespaces);
});

for (const backend of backends("bad records", { memory: false })) {
  const raw = backend.raw;
  if (raw === undefined) continue;

  test(`${backend.name}: a pet whose stored value is invalid (each kind) is 500 internal_error, its page is served without it, other pets stay readable and the breaker stays closed`, async () => {
    const { store, reports, breaker, ns } = await open(backend);
    const healthy = await store.createPet({ name: "Healthy", categoryId: 1 });
    for (let kind = 0; kind < BAD_VALUES(0).length; kind++) {
      const pet = await store.createPet({ name: "Rex", categoryId: 1 });
      const [what, value] = BAD_VALUES(pet.id)[kind] as [string, string];
      await raw.writeValue(ns, pet.id, value);
      for (let i = 0; i < 5; i++) {
        const one = await get(store, `/v1/pets/${pet.id}`);
        assert.is(one.status, 500, `${what}: GET /v1/pets/${pet.id}`);
        assert.is(codeOf(one), "internal_error", what);
        assert.not.ok(String(one.body).includes(SECRET), `${what}: the answer holds no part of the value`);
      }
      const page = await get(store, "/v1/pets?limit=100");
      assert.is(page.status, 200, `${what}: a page that includes it is served without it`);
      const listed = (JSON.parse(String(page.body)) as { id: number }[]).map((p) => p.id);
      assert.not.ok(listed.includes(pet.id), `${what}: the bad pet is left out`);
      assert.ok(listed.includes(healthy.id), `${what}: the others are there`);
      assert.is((await get(store, `/v1/pets/${healthy.id}`)).status, 200, `${what}: a healthy pet`);
      await raw.writeValue(ns, pet.id, keyvJson({ id: pet.id, name: "Rex", categoryId: 1, status: "available" }));
    }
    assert.equal(breaker, [], "the breaker never opened");
    assert.ok(await store.ready(), "ready");
    const records = recordsIn(reports);
    assert.is(records.length, BAD_VALUES(0).length, "one report per bad key (five reads each)");
    for (const record of records) {
      assert.is(record.backend, backend.name === "redis-cluster" ? "redis" : backend.name);
      // The backend's real key: Redis's own key of the value, Keyv's key in a SQL table's key column.
      const key = backend.name.startsWith("redis") ? /^\{?[a-z0-9_]+\}?::\d+$/ : /^pets:\d+$/;
      assert.match(record.key, key);
      if (backend.name.startsWith("redis")) assert.ok(record.key.includes(ns), record.key);
      assert.ok(record.reason.length > 0);
    }
    assert.not.ok(JSON.stringify(reports.map(String)).includes(SECRET), "no report holds the value");
    await store.close();
  });

  test(`${backend.name}: a pet in the index whose value is missing is 500, left out of its page, and counts nothing toward the breaker`, async () => {
    const { store, breaker, ns } = await open(backend);
    await store.createPet({ name: "Rex", categoryId: 1 });
    await raw.addToIndex(ns, 50, "sold");
    for (let i = 0; i < 4; i++) assert.is((await get(store, "/v1/pets/50")).status, 500);
    const page = await get(store, "/v1/pets");
    assert.is(page.status, 200, "a page that includes it is served without it");
    assert.equal(
      (JSON.parse(String(page.body)) as { id: number }[]).map((p) => p.id),
      [1],
    );
    assert.is((await get(store, "/v1/pets?status=available")).status, 200, "a page without it");
    assert.equal(breaker, []);
    await store.close();
  });

  if (backend.name !== "postgres") {
    // A Postgres sequence cannot hold anything but an integer.
    test(`${backend.name}: an id sequence that is not an integer makes creates 500 (reported with its key) while reads keep working`, async () => {
      const { store, reports, breaker, ns } = await open(backend);
      const pet = await store.createPet({ name: "Rex", categoryId: 1 });
      await raw.setSequence(ns, "abc" as unknown as number);
      for (let i = 0; i < 4; i++) {
        const created = await store.handle({
          method: "POST",
          path: "/v1/pets",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: '{"name":"Max","categoryId":1}',
        });
        assert.is(created.status, 500, `create ${i}`);
        assert.is(codeOf(created), "internal_error");
        const keyed = await store.handle({
          method: "POST",
          path: "/v1/pets",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "idempotency-key": `k${i}` },
          body: '{"name":"Max","categoryId":1}',
        });
        assert.is(keyed.status, 500, `keyed create ${i}`);
      }
      assert.is((await get(store, `/v1/pets/${pet.id}`)).status, 200);
      assert.is((await get(store, "/v1/pets")).status, 200);
      assert.equal(breaker, []);
      const records = recordsIn(reports);
      assert.ok(records.length >= 1);
      assert.ok(
        records.every((r) => /seq/.test(r.key)),
        records.map((r) => r.key).join(),
      );
      await store.close();
    });
  }

  test(`${backend.name}: a walk of the list over a store with a bad record lists every other pet through Link, and reports the record once`, async () => {
    const { store, reports, breaker, ns } = await open(backend);
    for (let i = 0; i < 60; i++)
      await store.createPet({ name: `Rex${i}`, categoryId: 1, status: i % 2 ? "sold" : "available" });
    await raw.writeValue(ns, 10, `{"value":${SECRET}`);
    for (const filter of ["", "&status=available"]) {
      const seen: number[] = [];
      let next: string | undefined = `/v1/pets?limit=7${filter}`;
      let pages = 0;
      while (next !== undefined && pages++ < 20) {
        const [path, query] = next.split("?") as [string, string];
        const page = await store.handle({ method: "GET", path, query, headers: { authorization: `Bearer ${KEY}` } });
        assert.is(page.status, 200, next);
        seen.push(...(JSON.parse(String(page.body)) as { id: number }[]).map((p) => p.id));
        next = /<([^>]+)>; rel="next"/.exec(page.headers.link ?? "")?.[1];
      }
      const expected = Array.from({ length: 60 }, (_, i) => i + 1).filter(
        (id) => id !== 10 && (filter === "" || (id - 1) % 2 === 0),
      );
      assert.equal(seen, expected, `every other pet${filter}`);
    }
    assert.is((await get(store, "/v1/pets/10")).status, 500, "its own read stays 500");
    assert.is((await get(store, "/v1/pets/11")).status, 200);
    const records = recordsIn(reports);
    assert.is(records.length, 1, "reported once a minute");
    assert.match(records[0]?.key ?? "", /(^pets:10$)|::10$/);
    assert.equal(breaker, []);
    await store.close();
  });

  test(`${backend.name}: a sequence set behind the stored pets (a restored database) is repaired: the next creates get fresh ids, nothing is overwritten, one warning`, async () => {
    const { store, reports, breaker, ns } = await open(backend);
    const before = [];
    for (let i = 0; i < 3; i++) before.push(await store.createPet({ name: `Rex${i}`, categoryId: 1 }));
    await raw.setSequence(ns, 1);
    const created = await store.handle({
      method: "POST",
      path: "/v1/pets",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: '{"name":"Max","categoryId":1}',
    });
    assert.is(created.status, 201, String(created.body));
    assert.is(JSON.parse(String(created.body)).id, 4);
    await raw.setSequence(ns, 2);
    const keyed = await store.createPet({ name: "Bo", categoryId: 1 }, { idempotencyKey: "after-restore" });
    assert.is(keyed.pet.id, 5);
    const page = JSON.parse(String((await get(store, "/v1/pets")).body)) as { id: number; name: string }[];
    assert.equal(
      page.map((p) => `${p.id} ${p.name}`),
      ["1 Rex0", "2 Rex1", "3 Rex2", "4 Max", "5 Bo"],
      "every pet stored before is still there, unchanged",
    );
    const warnings = reports.filter((r) => r instanceof StorageWarning) as StorageWarning[];
    assert.is(warnings.length, 2, "one warning per repair");
    assert.match(warnings[0]?.message ?? "", /id sequence .* stood at [12], behind the stored pets: moved to 3/);
    assert.is(recordsIn(reports).length, 0, "not reported as an invalid record");
    assert.equal(breaker, []);
    await store.close();
  });
}

test.run();
