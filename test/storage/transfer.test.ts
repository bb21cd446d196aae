/**
 * Moving data on every backend: the published storage conformance cases (the transfer calls) on
 * each, and exports imported between backends (SQLite → Postgres, SQLite → Redis, Postgres →
 * SQLite, Redis → Redis Cluster, SQLite → memory, and each back again): every page served byte for
 * byte the same, the next create above every imported id, keys replaying until their own expiry.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { storageCases } from "../../conformance/storage.ts";
import { createPetStore } from "../../lib/index.ts";
import { PET_STATUSES, type PetStatus } from "../../lib/schemas.ts";
import type { IdempotencyRecord, PetStorage } from "../../lib/storage/port.ts";
import { type ExportRecord, exportStore, ImportError, importStore } from "../../server/index.ts";
import { type Backend, backends } from "./backends.ts";
import { RUN } from "./services.ts";

const list = backends("moving data");
const byName = new Map(list.map((backend) => [backend.name, backend]));
const namespaces = new Map<Backend, string[]>();
const opened: PetStorage[] = [];
let count = 0;

/** A new, empty store of `backend`, closed and removed after the suite. */
async function fresh(backend: Backend): Promise<PetStorage> {
  const ns = `${RUN}_mv${++count}`;
  namespaces.set(backend, [...(namespaces.get(backend) ?? []), ns]);
  const storage = await backend.open(ns);
  opened.push(storage);
  return storage;
}

/** Closes the stores opened so far and removes their data. */
async function cleanUp(): Promise<void> {
  await Promise.all(opened.splice(0).map((storage) => storage.close().catch(() => {})));
  for (const [backend, names] of namespaces) await backend.cleanup(names);
  namespaces.clear();
}

const conformance = suite("storage conformance: moving data");
conformance.after(cleanUp);
for (const backend of list) {
  for (const c of storageCases()) {
    conformance(`${backend.name}: ${c.name}`, () => c.run(() => fresh(backend)));
  }
}
conformance.run();

const AUTH = "Bearer transfer-test";

/** Every page a client walks (all pets, then each status; `limit` a page), each answer's body as served. */
async function servedPages(storage: PetStorage, limit = 37): Promise<string[]> {
  const store = createPetStore({ storage, auth: ["transfer-test"], breaker: false });
  const bodies: string[] = [];
  for (const status of [undefined, ...PET_STATUSES] as (PetStatus | undefined)[]) {
    let query: string | undefined = `limit=${limit}${status === undefined ? "" : `&status=${status}`}`;
    while (query !== undefined) {
      const answer = await store.respond({ method: "GET", path: "/v1/pets", query, headers: { authorization: AUTH } });
      assert.is(answer.status, 200, answer.body);
      bodies.push(`${answer.headers.link ?? ""}\n${answer.body}`);
      query = /<\/v1\/pets\?([^>]*)>; rel="next"/.exec(answer.headers.link ?? "")?.[1];
    }
  }
  return bodies;
}

const SCOPE = "transfer-test-scope";
const keyOf = (key: string, now: number, ttlMs: number): IdempotencyRecord => ({
  scope: SCOPE,
  key,
  fingerprint: key
    .padEnd(64, "0")
    .slice(0, 64)
    .replace(/[^0-9a-f]/g, "0"),
  now,
  expiresAt: now + ttlMs,
});
const NAMES = ["Rex", "Mia 🐈", 'Quote " and \\ backslash', "Ünïcödé", "x".repeat(200), "  spaced  "];

/**
 * How long the short-lived key lives from its create: it must still replay once the export is
 * imported (the fill, the export and three imports later: seconds on a loaded CI machine), and the
 * test then waits for its expiry, overlapped with the rest of the case.
 */
const SHORT_KEY_MS = 10_000;

/**
 * Fills a store: 240 pets of every status, a gap in the ids, and keys (one expiring `shortMs` after
 * its create). Resolves when that key expires.
 */
async function fill(storage: PetStorage, shortMs: number): Promise<number> {
  const now = Date.now();
  for (let i = 0; i < 200; i++) {
    await storage.create({
      name: NAMES[i % NAMES.length] as string,
      categoryId: 1 + (i % 7),
      status: PET_STATUSES[i % 3] as PetStatus,
    });
  }
  await storage.transfer?.advanceIds(500); // ids 201…499 never used
  for (let i = 0; i < 38; i++) {
    await storage.createOnce?.(
      { name: `keyed ${i}`, categoryId: 2, status: "pending" },
      keyOf(`key-${i}`, now, 3_600_000),
    );
  }
  const short = keyOf("key-short", Date.now(), shortMs);
  await storage.createOnce?.({ name: "short-lived key", categoryId: 3, status: "sold" }, short);
  await storage.create({ name: "last", categoryId: 4, status: "available" });
  return short.expiresAt;
}

async function collect(storage: PetStorage): Promise<ExportRecord[]> {
  const records: ExportRecord[] = [];
  for await (const record of exportStore(storage)) records.push(record);
  return records;
}

const PAIRS: [Backend["name"], Backend["name"]][] = [
  ["sqlite", "postgres"],
  ["sqlite", "redis"],
  ["postgres", "sqlite"],
  ["redis", "redis-cluster"],
  ["sqlite", "memory"],
];

const pairs = suite("moving data between backends");
pairs.after(cleanUp);
for (const [from, to] of PAIRS) {
  const source = byName.get(from);
  const target = byName.get(to);
  if (source === undefined || target === undefined) continue;
  pairs(
    `${from} → ${to} → ${from}: the same pages, the next id above every imported one, keys replaying until their expiry`,
    async () => {
      const original = await fresh(source);
      const shortMs = SHORT_KEY_MS;
      const shortExpiresAt = await fill(original, shortMs);
      const records = await collect(original);
      const header = records[0] as Extract<ExportRecord, { format: string }>;
      assert.is(header.pets, 240);
      assert.is(header.keys, 39);

      // A changed export is refused whole: nothing written, not even the sequence.
      const moved = await fresh(target);
      const changed = records.map((r) => ("pet" in r && r.pet.id === 7 ? { pet: { ...r.pet, name: "Changed" } } : r));
      try {
        await importStore(moved, changed);
        assert.unreachable("a changed export is refused");
      } catch (error) {
        assert.instance(error, ImportError);
        assert.match(String(error), /digest/);
      }
      assert.equal(await moved.list({ after: 0, limit: 10 }), []);
      assert.is(await moved.transfer?.nextId(), 1);

      // An import stopped after its keys (they come first) is finished by a second run.
      const stop = new AbortController();
      const stopped = importStore(moved, records, {
        signal: stop.signal,
        onProgress: () => stop.abort(new Error("stop")),
      });
      await stopped.then(
        () => assert.unreachable("the import stops"),
        (error: unknown) => assert.is(String(error), "Error: stop"),
      );
      const result = await importStore(moved, records);
      assert.is(result.keysWritten, 0, "the keys of the first run are there");
      assert.is(result.petsWritten, 240);
      assert.is(result.petsPresent, 0);
      // Keys replay their pet on the target, each until its own expiry (checked first, while the
      // short-lived key is surely live), then the key is new again (checked last, after its expiry).
      const now = Date.now();
      // (A margin for the backend's own clock, read a moment later.)
      assert.ok(
        now < shortExpiresAt - 2000,
        `the move took longer than the short key's ${shortMs} ms life: no replay before its expiry to check`,
      );
      const replay = await moved.createOnce?.(
        { name: "keyed 5", categoryId: 2, status: "pending" },
        keyOf("key-5", now, 3_600_000),
      );
      assert.ok(replay !== undefined && "pet" in replay && replay.replayed, "a key replays after the move");
      assert.is(replay.pet.name, "keyed 5");
      const otherCreate = { ...keyOf("key-5", now, 3_600_000), fingerprint: "f".repeat(64) };
      const reused = await moved.createOnce?.({ name: "other", categoryId: 2, status: "pending" }, otherCreate);
      assert.equal(reused, { conflict: "reused" });
      const early = await moved.createOnce?.(
        { name: "short-lived key", categoryId: 3, status: "sold" },
        keyOf("key-short", now, shortMs),
      );
      assert.ok(early !== undefined && "pet" in early && early.replayed, "the short key replays before its expiry");
      assert.equal(await servedPages(moved), await servedPages(original), "every page the same bytes");

      // Back again, into a new store of the first kind: still the same pages.
      const back = await fresh(source);
      await importStore(back, await collect(moved));
      assert.equal(await servedPages(back), await servedPages(original));

      await new Promise((resolve) => setTimeout(resolve, Math.max(0, shortExpiresAt + 200 - Date.now())));
      const late = Date.now();
      const after = await moved.createOnce?.(
        { name: "short-lived key", categoryId: 3, status: "sold" },
        keyOf("key-short", late, shortMs),
      );
      assert.ok(after !== undefined && "pet" in after && !after.replayed, "after its expiry the key is new");

      // The next create takes an id above every imported one (and the header's nextId).
      const created = await moved.create({ name: "new", categoryId: 1, status: "available" });
      assert.ok(created.id >= header.nextId && created.id > 501, `id ${created.id} after nextId ${header.nextId}`);
    },
  );
}
pairs.run();
