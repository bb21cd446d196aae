/**
 * Where the Redis storage keeps its keys: the names of before (`<ns>:…`), so that a store written
 * by earlier versions (its keys planted here as they wrote them) opens and serves as it was.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PetStorage } from "../../lib/storage/port.ts";
import { redisStorage } from "../../lib/storage/redis.ts";
import { REDIS_URL, RUN, serviceAvailable } from "./services.ts";

async function connect(url: string) {
  const { createClient } = await import("@keyv/redis");
  const client = createClient({ url });
  client.on("error", () => {});
  await client.connect();
  return client;
}

type Client = Awaited<ReturnType<typeof connect>>;

/** Every key under `prefix` (then `:`), sorted. */
async function keysUnder(client: Client, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) found.push(...keys);
  return found.sort();
}

const HOUR = 3_600_000;
const FINGERPRINT = "f".repeat(64);
const rex = { id: 1, name: "Rex", categoryId: 1, status: "available" } as const;
const quoted = { id: 2, name: 'say "hi" 🐈', categoryId: 2, status: "sold" } as const;
const mia = { id: 3, name: "Mia", categoryId: 3, status: "pending" } as const;

/**
 * The keys the Redis storage wrote with one script per create, for two plain creates and one with
 * an Idempotency-Key (recorded from that code): `<ns>` stands for the namespace.
 */
async function plantEarlierStore(client: Client, ns: string): Promise<void> {
  const value = (pet: object) => JSON.stringify({ value: pet });
  await client.set(`${ns}:seq`, "3");
  await client.set(`${ns}::1`, value(rex));
  await client.set(`${ns}::2`, value(quoted));
  await client.set(`${ns}::3`, value(mia));
  await client.zAdd(
    `${ns}:ids`,
    [1, 2, 3].map((id) => ({ score: id, value: String(id) })),
  );
  await client.zAdd(`${ns}:ids:available`, { score: 1, value: "1" });
  await client.zAdd(`${ns}:ids:sold`, { score: 2, value: "2" });
  await client.zAdd(`${ns}:ids:pending`, { score: 3, value: "3" });
  await client.set(`${ns}:idem:8:caller-a:order-1`, `${FINGERPRINT} 3 ${Date.now() + HOUR}`, { PX: HOUR });
}

const record = (fingerprint = FINGERPRINT) => ({
  scope: "caller-a",
  key: "order-1",
  fingerprint,
  now: Date.now(),
  expiresAt: Date.now() + HOUR,
});

/** What a store planted by `plantEarlierStore` must serve, and where its next create goes. */
async function servesEarlierStore(storage: PetStorage): Promise<void> {
  assert.equal(await storage.list({ after: 0, limit: 10 }), [rex, quoted, mia]);
  assert.equal(await storage.list({ status: "sold", after: 0, limit: 10 }), [quoted]);
  assert.equal(await storage.get(2), quoted);
  assert.equal(await storage.findOnce?.(record()), { pet: mia, replayed: true });
  assert.equal(await storage.createOnce?.({ name: "Mia", categoryId: 3, status: "pending" }, record()), {
    pet: mia,
    replayed: true,
  });
  assert.equal(await storage.findOnce?.(record("e".repeat(64))), { conflict: "reused" });
  const next = await storage.create({ name: "Bo", categoryId: 4, status: "available" });
  assert.is(next.id, 4);
  assert.equal(await storage.list({ status: "available", after: 0, limit: 10 }), [rex, next]);
}

if (serviceAvailable("redis", "Redis key layout")) {
  const s = suite("redis key layout: one server");
  const ns = `${RUN}_layout`;
  let client: Client | undefined;
  let storage: PetStorage | undefined;
  s.after(async () => {
    await storage?.close();
    if (client) {
      for (const key of await keysUnder(client, ns)) await client.unlink(key);
      client.destroy();
    }
  });

  s(
    "redis: a store written by the one-script creates of before (keys <ns>:…) opens and serves its pets, pages, key records and next id",
    async () => {
      client = await connect(REDIS_URL);
      await plantEarlierStore(client, ns);
      storage = await redisStorage({ url: REDIS_URL, namespace: ns });
      await servesEarlierStore(storage);
    },
  );

  s("redis: the keys keep their names (<ns>:seq, <ns>:ids…, <ns>::<id>, <ns>:idem:…)", async () => {
    assert.ok(client);
    assert.equal(await keysUnder(client, ns), [
      `${ns}::1`,
      `${ns}::2`,
      `${ns}::3`,
      `${ns}::4`,
      `${ns}:idem:8:caller-a:order-1`,
      `${ns}:ids`,
      `${ns}:ids:available`,
      `${ns}:ids:pending`,
      `${ns}:ids:sold`,
      `${ns}:seq`,
    ]);
  });
  s.run();
}
