/**
 * Rate limits shared by every process (contract 1.3): on SQLite, Redis, Redis Cluster and
 * Postgres the count lives in the storage. Each backend's counter never grants past the limit,
 * counts each caller and window apart, and is emptied by `clear()`; two real processes on one
 * backend, each sending twice the limit with one key, admit between them no more than the limit
 * and at least the limit less 10% and one per process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PetStorage, RateCounter } from "../../lib/storage/port.ts";
import { type Backend, backends } from "./backends.ts";
import { RUN } from "./services.ts";

const workerScript = fileURLToPath(new URL("./rate-worker.ts", import.meta.url));
const CHILD_TIMEOUT_MS = 120_000;

interface Outcome {
  admitted: number;
  refused: number;
  windows: number[];
}

function startWorker(spec: string, requests: number, limit: number, windowSeconds: number) {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", workerScript, spec, String(requests), String(limit), String(windowSeconds)],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
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
  const done = new Promise<Outcome>((resolve, reject) => {
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      markReady();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (code !== 0 || line === undefined)
        reject(new Error(`rate worker ended with ${code ?? signal}: ${err.slice(0, 2000)}`));
      else resolve(JSON.parse(line) as Outcome);
    });
  });
  done.catch(() => {});
  return { child, ready, done };
}

const lease = (counter: RateCounter, scope: string, window: number, want: number, limit = 10) =>
  counter.lease({ scope, window, windowSeconds: 60, want, limit });

function rateLimits(backend: Backend): void {
  const s = suite(`rate limits: ${backend.name}`);
  const ns = `${RUN}_rl${backend.name.replace(/[^a-z]/g, "").slice(0, 6)}`;
  const opened: PetStorage[] = [];
  const children: ChildProcess[] = [];
  s.after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    for (const storage of opened) await storage.close();
    await backend.cleanup([ns]);
  });
  const open = async () => {
    const storage = await backend.open(ns);
    opened.push(storage);
    return storage;
  };

  s(
    `${backend.name}: the counter grants up to the limit across connections, per caller and window, and clear() empties it`,
    async () => {
      const [one, two] = [await open(), await open()];
      const [a, b] = [one.rateCounter, two.rateCounter];
      assert.ok(a && b, "the storage has a shared counter");
      const window = Math.floor(Date.now() / 60_000);
      assert.equal(await lease(a, "caller-a", window, 4), { granted: 4, used: 4 });
      assert.equal(await lease(b, "caller-a", window, 4), { granted: 4, used: 8 });
      assert.equal(await lease(a, "caller-a", window, 4), { granted: 2, used: 10 }, "never past the limit");
      assert.equal(await lease(b, "caller-a", window, 1), { granted: 0, used: 10 });
      assert.equal(await lease(b, "caller-b", window, 3), { granted: 3, used: 3 }, "another caller counts apart");
      assert.equal(await lease(a, "caller-a", window + 1, 3), { granted: 3, used: 3 }, "another window counts apart");
      const racing = await Promise.all(
        Array.from({ length: 20 }, (_, i) => lease(i % 2 ? a : b, "caller-c", window, 1)),
      );
      assert.is(
        racing.reduce((sum, r) => sum + r.granted, 0),
        10,
        "concurrent leases grant exactly the limit",
      );
      await one.clear?.();
      assert.equal(await lease(b, "caller-a", window, 4), { granted: 4, used: 4 }, "clear() removed the counts");
    },
  );

  s(
    `${backend.name}: two processes with one key admit no more than the limit between them, and at least 10% and one per process less`,
    async () => {
      const limit = 300;
      const windowSeconds = 86_400; // one window for the whole test, unless it runs across midnight (UTC): then once more
      for (let attempt = 0; attempt < 2; attempt++) {
        await (await open()).clear?.();
        const workers = [0, 1].map(() => startWorker(backend.spec(ns), 2 * limit, limit, windowSeconds));
        children.push(...workers.map((w) => w.child));
        await Promise.all(workers.map((w) => w.ready));
        for (const w of workers) w.child.stdin?.end("go\n");
        const outcomes = await Promise.all(workers.map((w) => w.done));
        if (new Set(outcomes.flatMap((o) => o.windows)).size > 1) continue;
        const admitted = outcomes.reduce((sum, o) => sum + o.admitted, 0);
        assert.ok(admitted <= limit, `${admitted} admitted`);
        assert.ok(admitted >= limit - limit / 10 - 2, `${admitted} admitted`);
        assert.ok(
          outcomes.every((o) => o.admitted > 0),
          `each process admitted some: ${JSON.stringify(outcomes)}`,
        );
        assert.is(
          outcomes.reduce((sum, o) => sum + o.admitted + o.refused, 0),
          4 * limit,
        );
        return;
      }
      assert.unreachable("both attempts ran across a window's end");
    },
  );

  s.run();
}

for (const backend of backends("rate limits", { memory: false })) rateLimits(backend);
