/**
 * Several processes on one backend are one service: 4 real child processes create 2,500 pets
 * each at the same time on one SQLite file, one Redis and one Postgres; the result is 10,000
 * distinct ids and pagination walks that return each pet exactly once.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Pet, PetStatus } from "../../lib/schemas.ts";
import { PET_STATUSES } from "../../lib/schemas.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import { type Backend, backends } from "./backends.ts";
import { RUN } from "./services.ts";

const WORKERS = 4;
const PER_WORKER = 2500;
const CHILD_TIMEOUT_MS = 120_000;
const workerScript = fileURLToPath(new URL("./worker.ts", import.meta.url));

interface Worker {
  child: ChildProcess;
  ready: Promise<void>;
  done: Promise<number[]>;
}

function startWorker(spec: string, n: number): Worker {
  const child = spawn(process.execPath, ["--import", "tsx", workerScript, spec, String(PER_WORKER), String(n)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    if (out.startsWith("ready\n")) markReady();
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
  const done = new Promise<number[]>((resolve, reject) => {
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      markReady();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (code !== 0 || line === undefined) {
        reject(new Error(`worker ${n} ended with ${code ?? signal}: ${err.slice(0, 2000)}`));
        return;
      }
      resolve((JSON.parse(line) as { ids: number[] }).ids);
    });
  });
  return { child, ready, done };
}

async function walk(storage: PetStorage, status?: PetStatus): Promise<Pet[]> {
  const seen: Pet[] = [];
  let after = 0;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await storage.list({ status, after, limit: 100 });
    seen.push(...page);
    const last = page[page.length - 1];
    if (page.length < 100 || last === undefined) return seen;
    after = last.id;
  }
  throw new Error("walk did not end");
}

function multiProcess(backend: Backend): void {
  const s = suite(`storage multi-process: ${backend.name}`);
  const ns = `${RUN}_mp${backend.name.slice(0, 2)}`;
  const workers: Worker[] = [];
  let storage: PetStorage | undefined;

  s.after(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
    await storage?.close();
    await backend.cleanup([ns]);
  });

  s(
    `${backend.name}: 4 processes x 2,500 concurrent creates give 10,000 distinct ids and walks return each pet exactly once`,
    async () => {
      storage = await backend.open(ns);
      for (let n = 0; n < WORKERS; n++) workers.push(startWorker(backend.spec(ns), n));
      const done = Promise.all(workers.map((w) => w.done));
      done.catch(() => {});
      await Promise.all(workers.map((w) => w.ready));
      for (const w of workers) w.child.stdin?.end("go\n");
      const perWorker = await done;

      const ids = perWorker.flat();
      assert.is(ids.length, WORKERS * PER_WORKER);
      assert.is(new Set(ids).size, WORKERS * PER_WORKER, "every id is handed out once");
      assert.ok(ids.every((id) => Number.isSafeInteger(id) && id >= 1));

      const all = await walk(storage);
      assert.equal(
        all.map((p) => p.id),
        [...ids].sort((a, b) => a - b),
        "the walk returns each created pet once, in id order",
      );
      const expected = new Map<number, string>();
      perWorker.forEach((list, n) => {
        list.forEach((id, i) => {
          expected.set(id, `w${n}-${i} ${PET_STATUSES[i % 3]}`);
        });
      });
      assert.ok(
        all.every((p) => expected.get(p.id) === `${p.name} ${p.status}`),
        "each id holds the pet its creator was given",
      );
      let sum = 0;
      for (const status of PET_STATUSES) {
        const pets = await walk(storage, status);
        assert.ok(pets.every((p) => p.status === status));
        assert.is(new Set(pets.map((p) => p.id)).size, pets.length);
        sum += pets.length;
      }
      assert.is(sum, WORKERS * PER_WORKER, "the status walks together return each pet once");
    },
  );

  s.run();
}

for (const backend of backends("multi-process storage", { memory: false })) multiProcess(backend);
