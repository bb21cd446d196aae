/**
 * Idempotency across processes: 3 real child processes create the same 300 pets with the same
 * keys, at the same time, on one SQLite file, one Redis and one Postgres. Every key gives one
 * pet, every process is answered that same pet, and the store holds each name exactly once.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Pet } from "../../lib/schemas.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import { type Backend, backends } from "./backends.ts";
import { RUN } from "./services.ts";

const PROCESSES = 3;
const KEYS = 300;
const CHILD_TIMEOUT_MS = 120_000;
const workerScript = fileURLToPath(new URL("./once-worker.ts", import.meta.url));

interface Outcome {
  ids: number[];
  created: number;
}

function startWorker(spec: string) {
  const child = spawn(process.execPath, ["--import", "tsx", workerScript, spec, String(KEYS)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    if (out.startsWith("ready\n")) markReady();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
  const done = new Promise<Outcome>((resolve, reject) => {
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      markReady();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (code !== 0 || line === undefined)
        reject(new Error(`worker ended with ${code ?? signal}: ${err.slice(0, 2000)}`));
      else resolve(JSON.parse(line) as Outcome);
    });
  });
  done.catch(() => {});
  return { child, ready, done };
}

async function walk(storage: PetStorage): Promise<Pet[]> {
  const seen: Pet[] = [];
  for (let after = 0, pages = 0; pages < 1000; pages++) {
    const page = await storage.list({ after, limit: 100 });
    seen.push(...page);
    const last = page[page.length - 1];
    if (page.length < 100 || last === undefined) return seen;
    after = last.id;
  }
  throw new Error("walk did not end");
}

function acrossProcesses(backend: Backend): void {
  const s = suite(`storage idempotency across processes: ${backend.name}`);
  const ns = `${RUN}_ip${backend.name.slice(0, 2)}`;
  const workers: ReturnType<typeof startWorker>[] = [];
  let storage: PetStorage | undefined;

  s.after(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
    await storage?.close();
    await backend.cleanup([ns]);
  });

  s(
    `${backend.name}: 3 processes creating the same 300 pets with the same keys store each pet exactly once`,
    async () => {
      storage = await backend.open(ns);
      for (let n = 0; n < PROCESSES; n++) workers.push(startWorker(backend.spec(ns)));
      await Promise.all(workers.map((w) => w.ready));
      for (const w of workers) w.child.stdin.end("go\n");
      const outcomes = await Promise.all(workers.map((w) => w.done));

      assert.is(
        outcomes.reduce((sum, o) => sum + o.created, 0),
        KEYS,
        "each key created a pet once, in one of the processes",
      );
      const [first, ...others] = outcomes as [Outcome, ...Outcome[]];
      for (const other of others) assert.equal(other.ids, first.ids, "every process was answered the same pet per key");
      const pets = await walk(storage);
      assert.is(pets.length, KEYS);
      const byId = new Map(pets.map((p) => [p.id, p]));
      first.ids.forEach((id, i) => {
        assert.is(byId.get(id)?.name, `pet-${i}`);
      });
      assert.is(new Set(pets.map((p) => p.name)).size, KEYS, "every name stored once");
    },
  );

  s.run();
}

for (const backend of backends("idempotency across processes", { memory: false })) acrossProcesses(backend);
