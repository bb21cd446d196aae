/**
 * Where the Redis storage keeps its keys: on one server as before cluster support (`<ns>:…`, so a
 * store written by earlier versions opens and serves as it was), on a cluster under one hash tag
 * (`{<ns>}:…`, one slot); and the move of a single-server store into a cluster, by the steps
 * docs/STORAGE.md gives, run here as written.
 */
import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PetStorage } from "../../../lib/storage/port.ts";
import { redisStorage } from "../../../lib/storage/redis/index.ts";
import { type OwnRedis, ownRedis } from "../../faults/support.ts";
import { ROOT } from "../../support/program.ts";
import { REDIS_URL, RUN, redisClusterAvailable, serviceAvailable } from "../services.ts";
import { runCluster } from "./cluster-backend.ts";

async function connect(url: string) {
  const { createClient } = await import("@keyv/redis");
  const client = createClient({ url });
  client.on("error", () => {});
  await client.connect();
  return client;
}

type Client = Awaited<ReturnType<typeof connect>>;

/** Every key under `prefix` (then `:`), sorted. */
async function listKeysUnder(client: Client, prefix: string): Promise<string[]> {
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
 * The keys the Redis storage wrote before cluster support, for two plain creates and one with an
 * Idempotency-Key (recorded from that code): `<ns>` stands for the namespace.
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
async function checkEarlierStoreServed(storage: PetStorage): Promise<void> {
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
      for (const key of [...(await listKeysUnder(client, ns)), ...(await listKeysUnder(client, `{${ns}}`))])
        await client.unlink(key);
      client.destroy();
    }
  });

  s(
    "redis: a store written before cluster support (keys <ns>:…) opens and serves its pets, pages, key records and next id",
    async () => {
      client = await connect(REDIS_URL);
      await plantEarlierStore(client, ns);
      storage = await redisStorage({ url: REDIS_URL, namespace: ns });
      await checkEarlierStoreServed(storage);
    },
  );

  s(
    "redis: on one server the keys keep their names (<ns>:seq, <ns>:ids…, <ns>::<id>, <ns>:idem:…), none under {<ns>}",
    async () => {
      assert.ok(client);
      assert.equal(await listKeysUnder(client, ns), [
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
      assert.equal(await listKeysUnder(client, `{${ns}}`), []);
    },
  );
  s.run();
}

/** The fenced block right after `<!-- <marker> -->` in a Markdown file of the repository. */
function readDocumentedBlock(file: string, marker: string): string {
  const text = readFileSync(join(ROOT, file), "utf8");
  const match = new RegExp(`<!-- ${marker} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\``).exec(text);
  if (match?.[1] === undefined) throw new Error(`${file} has no sh block after <!-- ${marker} -->`);
  return match[1];
}

/** Runs a shell script with `env` added; rejects with its output unless it exits 0. */
function runShell(script: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      out += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`the script ended with ${code}:\n${out}`));
    });
  });
}

if (redisClusterAvailable("Redis key layout")) {
  const s = suite("redis key layout: cluster");
  const ns = `${RUN}_clayout`;
  let single: OwnRedis | undefined;
  const opened: PetStorage[] = [];
  s.after(async () => {
    await Promise.all(opened.map((storage) => storage.close()));
    await single?.kill();
    if (single) rmSync(single.dir, { recursive: true, force: true });
  });

  s("redis-cluster: every key of a store shares the hash tag {<ns>}: one slot, on one primary", async () => {
    const cluster = await runCluster();
    const storage = await redisStorage({ cluster: { rootNodes: cluster.rootNodes }, namespace: `${ns}_tag` });
    opened.push(storage);
    await storage.create({ name: "Rex", categoryId: 1, status: "available" });
    await storage.createOnce?.({ name: "Mia", categoryId: 1, status: "sold" }, record());
    const primary = await cluster.primaryOf(`{${ns}_tag}`);
    const client = await connect(`redis://127.0.0.1:${primary}`);
    try {
      const keys = await listKeysUnder(client, `{${ns}_tag}`);
      assert.is(keys.length, 7, keys.join(" "));
      const slots = await Promise.all(keys.map((key) => cluster.command(primary, "CLUSTER", "KEYSLOT", key)));
      assert.is(new Set(slots).size, 1, `one slot: ${slots.join(" ")}`);
      await storage.clear?.();
      assert.equal(await listKeysUnder(client, `{${ns}_tag}`), [], "clear() finds them all on that primary");
    } finally {
      client.destroy();
    }
  });

  s(
    "redis-cluster: a single-server store moved by docs/STORAGE.md's steps (rename into {<ns>}, redis-cli --cluster import) serves there as it did",
    async () => {
      const cluster = await runCluster();
      single = await ownRedis();
      const client = await connect(single.url);
      try {
        await plantEarlierStore(client, `${ns}_moved`);
      } finally {
        client.destroy();
      }
      const steps = readDocumentedBlock("docs/STORAGE.md", "redis-to-cluster");
      await runShell(steps, {
        SOURCE: `127.0.0.1:${single.port}`,
        NODE: `127.0.0.1:${cluster.ports[0]}`,
        NS: `${ns}_moved`,
      });
      const storage = await redisStorage({ cluster: { rootNodes: cluster.rootNodes }, namespace: `${ns}_moved` });
      opened.push(storage);
      await checkEarlierStoreServed(storage);
      await storage.clear?.();
    },
  );
  s.run();
}
