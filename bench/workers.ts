/**
 * W1: the standalone server with PETSTORE_WORKERS=2 against PETSTORE_WORKERS=1, both on the same
 * SQLite file of 10,000 pets, `GET /v1/pets?limit=20` loaded by autocannon from this process:
 * rounds A, B, A, B, … as in http.ts. Each server is the real program (`server/dist/cli.js`,
 * its request log on, discarded). The row prints the machine's cores: on fewer than 4 the load
 * generator shares them with the workers, so the row is information only there; on 4 or more
 * the target is ≥ 1.6×.
 * Run by bench/run.ts; by hand (after `npm run build`): `npx tsx bench/workers.ts [--quick]`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { createPetStore } from "../lib/index.ts";
import { type BenchStorage, openBench } from "./backends.ts";
import { cleanupOnInterrupt, finish } from "./child.ts";
import { benchPet } from "./fill.ts";
import { alternating, median, QUICK, spread } from "./measure.ts";
import { type Row, row, type Target } from "./report.ts";

const CORES = availableParallelism();
const TARGET: Target | null = CORES >= 4 ? { on: "ratio", op: ">=", value: 1.6 } : null;
const PETS = QUICK ? 1000 : 10_000;
const ROUNDS = QUICK ? 1 : 8;
const ROUND_SECONDS = QUICK ? 1 : 1.5;
const WARM_SECONDS = QUICK ? 0 : 2;
const CONNECTIONS = 32;
const PATH = "/v1/pets?limit=20";
const KEY = randomBytes(16).toString("hex");
// As `npm start` runs it: the compiled dist/ (bench/run.ts builds it first), not through tsx.
const SERVER = fileURLToPath(new URL("../server/dist/cli.js", import.meta.url));
const scenario = `GET ${PATH}, standalone server on SQLite (${PETS.toLocaleString("en")} pets), 2 workers vs 1, ${CORES} cores`;

let bench: BenchStorage | undefined;
const servers: ChildProcess[] = [];

/** Starts the server with `workers` processes on `spec`; resolves its port from the start-up line. */
function startServer(workers: number, spec: string): Promise<number> {
  const child = spawn(process.execPath, [SERVER], {
    env: {
      ...process.env,
      PORT: "0",
      PETSTORE_WORKERS: String(workers),
      PETSTORE_STORAGE: spec,
      PETSTORE_API_KEYS: KEY,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  servers.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`${workers} worker(s): no start-up line within 60 s`)), 60_000);
    const onData = (chunk: string) => {
      out += chunk;
      const port = /listening on http:\/\/[^:]+:(\d+)\//.exec(out)?.[1];
      if (port === undefined) return;
      clearTimeout(timer);
      out = "";
      child.stdout?.off("data", onData);
      child.stdout?.resume(); // the request log goes nowhere
      resolve(Number(port));
    };
    child.stdout?.setEncoding("utf8").on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${workers} worker(s): the server exited (${code}) before listening`));
    });
  });
}

/** One autocannon run; throws unless every request got a 2xx answer. Requests a second. */
async function load(port: number, seconds: number): Promise<number> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${PATH}`,
    headers: { authorization: `Bearer ${KEY}` },
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
  });
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0 || result.requests.total === 0) {
    throw new Error(
      `W1: port ${port}: ${result.requests.total} requests, ${result.errors} errors, ${result.timeouts} time-outs, ${result.non2xx} non-2xx`,
    );
  }
  return result.requests.total / result.duration;
}

async function stopServers(): Promise<void> {
  await Promise.all(
    servers.splice(0).map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
          child.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill("SIGTERM");
        }),
    ),
  );
}

async function measure(): Promise<Row[]> {
  try {
    bench = await openBench("sqlite", "w1");
    const store = createPetStore({ storage: bench.storage, auth: ["bench"], operationTimeoutMs: 30_000 });
    for (let id = 1; id <= PETS; id++) {
      const { name, categoryId, status } = benchPet(id);
      await store.createPet({ name, categoryId, status });
    }
    const location = bench.location;
    if (location.kind !== "sqlite") throw new Error("W1 needs a SQLite file");
    const spec = `sqlite:${location.path}?namespace=${location.table}`;
    const one = await startServer(1, spec);
    const two = await startServer(2, spec);
    if (WARM_SECONDS > 0) {
      await load(one, WARM_SECONDS);
      await load(two, WARM_SECONDS);
    }
    const [twoRounds, oneRounds] = await alternating(
      ROUNDS,
      () => load(two, ROUND_SECONDS),
      () => load(one, ROUND_SECONDS),
    );
    const ratios = twoRounds.map((r, i) => r / (oneRounds[i] as number));
    return [
      row({
        id: "W1",
        scenario,
        ours: median(twoRounds),
        baseline: median(oneRounds),
        unit: "req/s",
        ratio: median(ratios),
        target: TARGET,
        note:
          `${ROUNDS}×${ROUND_SECONDS} s per side, ${CONNECTIONS} connections, autocannon in the bench process; ` +
          `ratio: median of the round pairs' ${spread(ratios)}` +
          (TARGET === null
            ? `; information only on ${CORES} cores (the load generator shares them; target ≥ 1.6× on 4 or more)`
            : ""),
      }),
    ];
  } finally {
    await stopServers();
    const opened = bench;
    bench = undefined;
    await opened?.drop();
  }
}

const measured = measure();
cleanupOnInterrupt(async () => {
  await measured.catch(() => {});
  await stopServers();
  await bench?.drop();
});
finish(await measured);
