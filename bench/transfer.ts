/**
 * X1: moving a store, as `petstore migrate` does it: 100,000 pets and 10,000 idempotency keys from
 * SQLite exported to a file, then the file imported into Postgres (argv[2] "postgres") or Redis
 * ("redis"), checks included; the row is the seconds of both, the note each part. Target: under
 * 60 s. The source is filled through its own transfer calls (as an import would), and the target
 * checked afterwards (every pet, the next id, the keys).
 * Run by bench/run.ts; by hand: `npx tsx bench/transfer.ts postgres [--quick]`.
 */
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Pet } from "../lib/schemas.ts";
import type { KeyRecord } from "../lib/storage/port.ts";
import { exportLines } from "../transfer/export.ts";
import { importFile } from "../transfer/import.ts";
import { type BackendKind, type BenchStorage, openBench } from "./backends.ts";
import { cleanupOnInterrupt, finish } from "./child.ts";
import { QUICK, skipped } from "./measure.ts";
import { type Row, row, type Target } from "./report.ts";

const kind = process.argv[2] as BackendKind;
const PETS = QUICK ? 2_000 : 100_000;
const KEYS = QUICK ? 200 : 10_000;
const TARGET: Target = { on: "ours", op: "<=", value: 60 };
const scenario = `SQLite to ${kind === "redis" ? "Redis" : "Postgres"}: export, then import, ${PETS.toLocaleString("en-US")} pets and ${KEYS.toLocaleString("en-US")} keys`;

const opened: BenchStorage[] = [];
let folder: string | undefined;
async function drop(): Promise<void> {
  await Promise.all(opened.splice(0).map((bench) => bench.drop()));
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
}

/** Fills the source: `PETS` pets of every status, and `KEYS` live keys on the first of them. */
async function fill(source: BenchStorage): Promise<void> {
  const transfer = source.storage.transfer;
  if (transfer === undefined) throw new Error("X1: the source has no transfer calls");
  const statuses = ["available", "pending", "sold"] as const;
  for (let first = 1; first <= PETS; first += 1000) {
    const pets: Pet[] = [];
    for (let id = first; id < first + 1000 && id <= PETS; id++) {
      pets.push({ id, name: `Pet ${id}`, categoryId: 1 + (id % 50), status: statuses[id % 3] as Pet["status"] });
    }
    await transfer.putPets(pets);
  }
  const now = Date.now();
  for (let first = 1; first <= KEYS; first += 500) {
    const keys: KeyRecord[] = [];
    for (let i = first; i < first + 500 && i <= KEYS; i++) {
      keys.push({
        scope: "bench-scope",
        key: `key-${i}`,
        fingerprint: "a".repeat(64),
        petId: i,
        expiresAt: now + 86_400_000,
      });
    }
    await transfer.putKeys(keys, now);
  }
}

async function measure(): Promise<Row[]> {
  try {
    const source = await openBench("sqlite", "x1from");
    opened.push(source);
    const target = await openBench(kind, "x1to");
    opened.push(target);
    await fill(source);
    folder = await mkdtemp(join(tmpdir(), "petbench-x1-"));
    const file = join(folder, "export.ndjson");

    const started = performance.now();
    const out = createWriteStream(file);
    let chunk = "";
    for await (const [, line] of exportLines(source.storage)) {
      chunk += line;
      if (chunk.length >= 65_536) {
        if (!out.write(chunk)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
        chunk = "";
      }
    }
    await new Promise<void>((resolve, reject) => {
      out.once("error", reject);
      out.end(chunk, () => resolve());
    });
    const exported = performance.now();
    const result = await importFile(target.storage, file);
    const done = performance.now();

    if (result.petsWritten !== PETS || result.keysWritten !== KEYS || result.nextId <= PETS) {
      throw new Error(`X1 ${kind}: the import wrote ${JSON.stringify(result)}`);
    }
    const last = await target.storage.get(PETS);
    if (last?.name !== `Pet ${PETS}`) throw new Error(`X1 ${kind}: the last pet reads back as ${JSON.stringify(last)}`);
    const seconds = (done - started) / 1000;
    return [
      row({
        id: "X1",
        scenario,
        ours: seconds,
        baseline: null,
        unit: "s",
        target: TARGET,
        note: `export ${((exported - started) / 1000).toFixed(1)} s, import ${((done - exported) / 1000).toFixed(1)} s (checks included), ${Math.round((PETS + KEYS) / seconds).toLocaleString("en-US")} records/s`,
      }),
    ];
  } catch (error) {
    return skipped(error, [{ id: "X1", scenario, unit: "s", target: TARGET }]);
  } finally {
    await drop();
  }
}

const measured = measure();
cleanupOnInterrupt(async () => {
  await measured.catch(() => {});
  await drop();
});
finish(await measured);
