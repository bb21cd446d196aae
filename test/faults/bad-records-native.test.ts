/**
 * Faults stay local, for what only a backend's own tools can plant: Redis keys of another type and
 * key records that cannot be read; SQLite values of another type, served copies that lie, and key
 * records that cannot be read. Each is that request's 500 (or, for a served copy, the record's
 * answer), never a 503, never the breaker, and a key record that cannot be read never lets a
 * second pet in.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { InvalidRecordError, redisStorage, sqliteStorage } from "../../lib/entries/storage.ts";
import type { PetStore, PetStoreResponse } from "../../lib/index.ts";
import { createPetStore, isPetStoreError } from "../../lib/index.ts";
import type { BreakerObservation } from "../../lib/observe.ts";
import { requireFromDriver } from "../../lib/storage/driver.ts";
import { REDIS_URL, serviceAvailable } from "../storage/services.ts";

const KEY = "bad-native-key-0123456789";
const auth = { authorization: `Bearer ${KEY}` };

const get = (store: PetStore, path: string): Promise<PetStoreResponse> =>
  store.handle({ method: "GET", path, headers: auth });
const post = (store: PetStore, body: string, idempotencyKey?: string): Promise<PetStoreResponse> =>
  store.handle({
    method: "POST",
    path: "/v1/pets",
    headers: {
      ...auth,
      "content-type": "application/json",
      ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }),
    },
    body,
  });
const codeOf = (response: PetStoreResponse) => (JSON.parse(String(response.body)) as { code: string }).code;
const keysReported = (reports: unknown[]) =>
  reports
    .map((r) => (isPetStoreError(r) ? r.cause : r))
    .filter((r): r is InvalidRecordError => r instanceof InvalidRecordError)
    .map((r) => r.key);

function openStore(storage: Awaited<ReturnType<typeof sqliteStorage>>) {
  const reports: unknown[] = [];
  const breaker: BreakerObservation[] = [];
  const store = createPetStore({
    storage,
    auth: [KEY],
    onError: (error) => reports.push(error),
    breaker: { failures: 2, onChange: (change) => breaker.push(change) },
  });
  return { store, reports, breaker };
}

if (serviceAvailable("redis", "bad native records")) {
  const { createClient } = await import("@keyv/redis");
  const namespaces: string[] = [];
  const client = createClient({ url: REDIS_URL });
  client.on("error", () => {});
  await client.connect();
  const fresh = async () => {
    const ns = `badn_${randomUUID().slice(0, 8)}`;
    namespaces.push(ns);
    return { ns, ...openStore(await redisStorage({ url: REDIS_URL, namespace: ns })) };
  };
  test.after(async () => {
    for (const ns of namespaces) {
      for await (const keys of client.scanIterator({ MATCH: `${ns}:*`, COUNT: 1000 })) {
        if (keys.length > 0) await client.del(keys);
      }
    }
    client.destroy();
  });

  test("redis: a pet key of another type is 500 internal_error naming the key, not 503, and the breaker stays closed", async () => {
    const { ns, store, reports, breaker } = await fresh();
    const bad = await store.createPet({ name: "Rex", categoryId: 1 });
    const good = await store.createPet({ name: "Max", categoryId: 1 });
    await client.del(`${ns}::${bad.id}`);
    await client.hSet(`${ns}::${bad.id}`, "name", "Rex");
    for (let i = 0; i < 6; i++) {
      const answer = await get(store, `/v1/pets/${bad.id}`);
      assert.is(answer.status, 500);
      assert.is(codeOf(answer), "internal_error");
    }
    const page = await get(store, "/v1/pets");
    assert.is(page.status, 200, "a page that includes it is served without it");
    assert.equal(
      (JSON.parse(String(page.body)) as { id: number }[]).map((p) => p.id),
      [good.id],
    );
    assert.is((await get(store, `/v1/pets/${good.id}`)).status, 200);
    assert.is((await post(store, '{"name":"Bo","categoryId":1}')).status, 201);
    assert.equal(breaker, []);
    assert.ok(await store.ready());
    assert.ok(keysReported(reports).includes(`${ns}::${bad.id}`), keysReported(reports).join());
    await store.close();
  });

  test("redis: an index or sequence of another type is 500, not 503, and the breaker stays closed", async () => {
    const { ns, store, breaker } = await fresh();
    await store.createPet({ name: "Rex", categoryId: 1 });
    await client.del(`${ns}:ids`);
    await client.set(`${ns}:ids`, "x");
    await client.del(`${ns}:seq`);
    await client.hSet(`${ns}:seq`, "n", "1");
    for (let i = 0; i < 4; i++) {
      assert.is((await get(store, "/v1/pets")).status, 500);
      assert.is((await get(store, "/v1/pets/1")).status, 500);
      assert.is((await post(store, '{"name":"Bo","categoryId":1}')).status, 500);
      assert.is((await post(store, '{"name":"Bo","categoryId":1}', `key-${i}`)).status, 500);
    }
    assert.equal(breaker, []);
    await store.close();
  });

  test("redis: a key record that cannot be read fails closed: 500 for its key, never a second pet", async () => {
    for (const planted of ["garbage", "a b", "f 1 soon", "f x 99999999999999"]) {
      const { ns, store, breaker } = await fresh();
      const first = await post(store, '{"name":"Rex","categoryId":1}', "order-1");
      assert.is(first.status, 201);
      const [recordKey] = await client.keys(`${ns}:idem:*`);
      assert.ok(recordKey);
      await client.set(recordKey, planted);
      for (let i = 0; i < 3; i++) {
        const again = await post(store, '{"name":"Rex","categoryId":1}', "order-1");
        assert.is(again.status, 500, `${planted}: a retry`);
        assert.is(codeOf(again), "internal_error");
      }
      assert.is((await post(store, '{"name":"Max","categoryId":1}', "order-2")).status, 201, "another key works");
      const pets = JSON.parse(String((await get(store, "/v1/pets")).body)) as unknown[];
      assert.is(pets.length, 2, `${planted}: no second pet for order-1`);
      await client.del(recordKey);
      await client.hSet(recordKey, "x", "y");
      assert.is(
        (await post(store, '{"name":"Rex","categoryId":1}', "order-1")).status,
        500,
        "a record of another type",
      );
      assert.equal(breaker, []);
      await store.close();
    }
  });
}

type Sqlite3 = typeof import("sqlite3");

test("sqlite: a served copy that is not a valid Pet is answered from Keyv's record and rewritten from it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "petstore-bad-"));
  try {
    const path = join(dir, "pets.db");
    const { store, breaker } = openStore(await sqliteStorage({ path, table: "t" }));
    const pets = [];
    for (let i = 0; i < 3; i++) pets.push(await store.createPet({ name: `Rex${i}`, categoryId: 1 }));
    const sqlite3 = requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");
    const db = new sqlite3.Database(path);
    db.configure("busyTimeout", 5000);
    const run = (sql: string, ...params: unknown[]) =>
      new Promise<void>((resolve, reject) => db.run(sql, params, (e) => (e ? reject(e) : resolve())));
    const copyOf = (id: number) =>
      new Promise<unknown>((resolve, reject) =>
        db.get("SELECT pet FROM t_index WHERE id = ?", [id], (e, row: { pet: unknown }) =>
          e ? reject(e) : resolve(row.pet),
        ),
      );
    await run("UPDATE t_index SET pet = 'garbage' WHERE id = ?", pets[0]?.id);
    await run(
      `UPDATE t_index SET pet = '{"id":${pets[1]?.id},"name":"","categoryId":1,"status":"sold"}' WHERE id = ?`,
      pets[1]?.id,
    );
    const one = await get(store, `/v1/pets/${pets[0]?.id}`);
    assert.is(one.status, 200);
    assert.equal(JSON.parse(String(one.body)), pets[0]);
    const page = await get(store, "/v1/pets");
    assert.is(page.status, 200);
    assert.equal(JSON.parse(String(page.body)), pets);
    assert.is(await copyOf(pets[0]?.id as number), JSON.stringify(pets[0]), "the copy is rewritten");
    assert.is(await copyOf(pets[1]?.id as number), JSON.stringify(pets[1]), "the copy is rewritten");

    // Keyv's record itself bad: a BLOB where text was stored, a key record whose pet id is not one.
    await run("UPDATE t_values SET value = x'00ff' WHERE key = ?", `pets:${pets[2]?.id}`);
    for (let i = 0; i < 4; i++) assert.is((await get(store, `/v1/pets/${pets[2]?.id}`)).status, 500);
    const without = await get(store, "/v1/pets");
    assert.is(without.status, 200, "served without it");
    assert.equal(
      (JSON.parse(String(without.body)) as { id: number }[]).map((p) => p.id),
      [pets[0]?.id, pets[1]?.id],
    );
    assert.is((await post(store, '{"name":"Max","categoryId":1}', "k")).status, 201);
    await run("UPDATE t_idempotency SET pet_id = 'abc'");
    for (let i = 0; i < 3; i++) assert.is((await post(store, '{"name":"Max","categoryId":1}', "k")).status, 500);
    assert.equal(breaker, []);
    await new Promise<void>((resolve) => db.close(() => resolve()));
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
