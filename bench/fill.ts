/**
 * Filling a storage with N known pets, fast. Memory goes through `create()`. SQLite, Redis and
 * Postgres are bulk-loaded through the same drivers, writing exactly what `create()` writes
 * (Keyv's serialised `{ value: pet }` under Keyv's key, the id index entries, the id sequence),
 * many pets a statement or pipeline; `checkFill` then proves through the store's own API that
 * every page, every get and the next create see the loaded pets as if they had been created.
 */
import Keyv from "keyv";
import type { PetStore } from "../lib/index.ts";
import type { Pet, PetStatus } from "../lib/schemas.ts";
import type { BenchStorage } from "./backends.ts";
import { pgPool, redisClient, sqliteConnection } from "./drivers.ts";

/** The status held by 1% of the bench's pets (every hundredth). */
export const RARE_STATUS: PetStatus = "sold";

/** Pet number `id` of every bench store: 1% sold, the rest half available, half pending. */
export function benchPet(id: number): Pet {
  const status: PetStatus = id % 100 === 0 ? RARE_STATUS : id % 2 === 0 ? "pending" : "available";
  return { id, name: `Pet ${id}`, categoryId: 1 + (id % 50), status };
}

const BATCH = 5000;

let aborted = false;
/** Makes every fill in progress throw at its next batch (the program is being interrupted). */
export function abortFill(): void {
  aborted = true;
}
function checkAborted(): void {
  if (aborted) throw new Error("fill interrupted");
}
const serialize = new Keyv().serialize as (data: { value: unknown; expires?: number }) => string;

/** Keyv's stored text for a pet, as `values.set(String(id), pet)` writes it. */
function stored(pet: Pet): string {
  return serialize({ value: pet, expires: undefined });
}

/** Fills an empty bench storage with pets 1..n. */
export async function fill(bench: BenchStorage, n: number): Promise<void> {
  const location = bench.location;
  switch (location.kind) {
    case "memory":
      for (let id = 1; id <= n; id++) {
        if (id % BATCH === 0) checkAborted();
        const { id: _, ...data } = benchPet(id);
        const pet = await bench.storage.create(data);
        if (pet.id !== id) throw new Error(`memory fill: expected id ${id}, got ${pet.id}`);
      }
      return;
    case "redis":
      return fillRedis(location.url, location.namespace, n);
    case "postgres":
      return fillPostgres(location.url, location.table, n);
    case "sqlite":
      return fillSqlite(location.path, location.table, n);
  }
}

/** Values as @keyv/redis keys them (`<ns>::<id>`), the sorted sets and the sequence of redis/index.ts. */
async function fillRedis(url: string, namespace: string, n: number): Promise<void> {
  const client = await redisClient(url);
  try {
    for (let start = 1; start <= n; start += BATCH) {
      checkAborted();
      const end = Math.min(n, start + BATCH - 1);
      const values: [string, string][] = [];
      const all: { score: number; value: string }[] = [];
      const byStatus: Record<PetStatus, { score: number; value: string }[]> = { available: [], pending: [], sold: [] };
      for (let id = start; id <= end; id++) {
        const pet = benchPet(id);
        values.push([`${namespace}::${id}`, stored(pet)]);
        all.push({ score: id, value: String(id) });
        byStatus[pet.status].push({ score: id, value: String(id) });
      }
      const batch = client.multi().mSet(values).zAdd(`${namespace}:ids`, all);
      for (const status of Object.keys(byStatus) as PetStatus[]) {
        if (byStatus[status].length > 0) batch.zAdd(`${namespace}:ids:${status}`, byStatus[status]);
      }
      await batch.exec();
    }
    await client.set(`${namespace}:seq`, String(n));
  } finally {
    client.destroy();
  }
}

/** Rows of `<table>_values` (Keyv's `pets:<id>` keys) and `<table>_index`, then the sequence. */
async function fillPostgres(url: string, table: string, n: number): Promise<void> {
  const pool = pgPool(url);
  try {
    for (let start = 1; start <= n; start += BATCH) {
      checkAborted();
      const end = Math.min(n, start + BATCH - 1);
      const keys: string[] = [];
      const texts: string[] = [];
      const ids: number[] = [];
      const statuses: string[] = [];
      for (let id = start; id <= end; id++) {
        const pet = benchPet(id);
        keys.push(`pets:${id}`);
        texts.push(stored(pet));
        ids.push(id);
        statuses.push(pet.status);
      }
      await Promise.all([
        pool.query(`INSERT INTO ${table}_values (key, value) SELECT * FROM unnest($1::text[], $2::text[])`, [
          keys,
          texts,
        ]),
        pool.query(`INSERT INTO ${table}_index (id, status) SELECT * FROM unnest($1::bigint[], $2::text[])`, [
          ids,
          statuses,
        ]),
      ]);
    }
    await pool.query(`SELECT setval('${table}_id_seq', $1)`, [n]);
    // A production table of this size has statistics; without them the planner guesses.
    await pool.query(`ANALYZE ${table}_values`);
    await pool.query(`ANALYZE ${table}_index`);
  } finally {
    await pool.end();
  }
}

/** Rows of `<table>_values` and `<table>_index` in one transaction, then `<table>_seq`. */
async function fillSqlite(path: string, table: string, n: number): Promise<void> {
  const db = await sqliteConnection(path);
  const rows = 400; // at most 3 parameters a row: well under SQLite's limit of parameters a statement
  try {
    await db.query("BEGIN");
    for (let start = 1; start <= n; start += rows) {
      checkAborted();
      const end = Math.min(n, start + rows - 1);
      const values: unknown[] = [];
      const index: unknown[] = [];
      for (let id = start; id <= end; id++) {
        const pet = benchPet(id);
        values.push(`pets:${id}`, stored(pet));
        index.push(id, pet.status, JSON.stringify(pet)); // the pet's served text, as a create writes it
      }
      const marks = (n: number) => `(${Array.from({ length: n }, () => "?").join(", ")})`;
      const rowsOf = (n: number) => Array.from({ length: end - start + 1 }, () => marks(n)).join(", ");
      await db.query(`INSERT INTO ${table}_values (key, value) VALUES ${rowsOf(2)}`, values);
      await db.query(`INSERT INTO ${table}_index (id, status, pet) VALUES ${rowsOf(3)}`, index);
    }
    await db.query(`UPDATE ${table}_seq SET value = ? WHERE id = 1`, [n]);
    await db.query("COMMIT");
    await db.query("ANALYZE");
  } finally {
    await db.close();
  }
}

function same(a: Pet | undefined, b: Pet, what: string): void {
  if (JSON.stringify(a) !== JSON.stringify(b)) {
    throw new Error(`fill check: ${what}: expected ${JSON.stringify(b)}, got ${JSON.stringify(a)}`);
  }
}

/**
 * Proves through the store's API that it holds exactly pets 1..n as `create()` would have made
 * them: first and last pages with and without the rare status, gets, and that the next create
 * gets id n + 1 (that pet is left in the store).
 */
export async function checkFill(store: PetStore, n: number): Promise<void> {
  const first = await store.listPets({ limit: 100 });
  const expectFirst = Math.min(100, n);
  if (first.pets.length !== expectFirst) throw new Error(`fill check: first page has ${first.pets.length} pets`);
  for (const [i, pet] of first.pets.entries()) same(pet, benchPet(i + 1), `page 1, pet ${i + 1}`);
  const rare = await store.listPets({ status: RARE_STATUS, limit: 10 });
  for (const [i, pet] of rare.pets.entries()) same(pet, benchPet((i + 1) * 100), `${RARE_STATUS} page, pet ${i + 1}`);
  if (rare.pets.length !== Math.min(10, Math.floor(n / 100))) {
    throw new Error(`fill check: the ${RARE_STATUS} page has ${rare.pets.length} pets`);
  }
  for (const id of [1, Math.ceil(n / 2), n]) same(await store.getPet(id), benchPet(id), `getPet(${id})`);
  const next = await store.createPet({ name: "After the fill", categoryId: 1, status: "available" });
  if (next.id !== n + 1) throw new Error(`fill check: the next create got id ${next.id}, expected ${n + 1}`);
}
