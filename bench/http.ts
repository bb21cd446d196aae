/**
 * H1, H2, H3, F1, F2, F3 (and O1: H1 with metrics on, against H1 with metrics off; O2: one server
 * allowing a page's origin, asked with that Origin and without, so the answers differ by the CORS
 * headers only), B1-B4 (the
 * standalone server on Redis, Postgres, SQLite): our server and its baseline, each in its own
 * child process, loaded in turn by
 * autocannon from this process over loopback: a warm-up of each, then rounds A, B, A, B, … so
 * that drift of the machine hits both alike. Before measuring, both answer one request and the
 * answers are compared (a baseline that answered something else would prove nothing); every
 * round must be all 2xx, without errors or time-outs.
 * F1 and F3 run both servers under Bun or Deno (bench/servers/fetch.ts): the fetch handler against
 * a bare `Bun.serve` / `Deno.serve` handler answering the same bytes.
 * B1-B4 load a fresh namespace of the shared engine (1,000 pets through the bulk loader for the
 * pages), and the baseline is a bare node:http server on the same engine, driver and data
 * (bench/servers/engine.ts).
 * Run by bench/run.ts; by hand: `npx tsx bench/http.ts H1 [--quick] [--profile]`, or
 * `npx tsx bench/http.ts B4 sqlite`.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import autocannon from "autocannon";
import { type BenchStorage, type Location, openBench } from "./backends.ts";
import { type Callgrind, callgrindMissing, countInstructions, prepareCallgrind } from "./callgrind.ts";
import { cpuOf, finish, start, stop, waitFor } from "./child.ts";
import { fill } from "./fill.ts";
import { countByFunction, describeDifference, PERF_MAP_FLAGS, removePerfMap } from "./functions.ts";
import { alternating, median, QUICK, skipped, spread } from "./measure.ts";
import { row, unavailable } from "./report.ts";
import { type Runtime, runtimeBinary, startRuntime } from "./runtime.ts";

type Engine = "redis" | "postgres" | "sqlite";
const ENGINES: readonly Engine[] = ["redis", "postgres", "sqlite"];
const ENGINE_NAMES: Record<Engine, string> = { redis: "Redis", postgres: "Postgres", sqlite: "SQLite" };

interface Scenario {
  label: string;
  ours:
    | "standalone"
    | "standalone-metrics"
    | "standalone-cors"
    | "standalone-limited"
    | "standalone-traced"
    | "hapi"
    | "node-http"
    | "fastify"
    | "fetch";
  /** A baseline of servers/baseline.ts, or "standalone…": our own server (servers/ours.ts, that mode) as the reference. */
  baseline:
    | "node-list"
    | "hapi-list"
    | "node-create"
    | "fastify-list"
    | "fetch-bare"
    | "standalone"
    | "standalone-no-otel"
    | "same"
    | "engine-list"
    | "engine-list-least"
    | "engine-page"
    | "engine-create";
  /** F1, F3: both servers run under this runtime instead of Node. */
  runtime?: Runtime;
  /** O2: our side's requests carry this Origin; the baseline ("same") is the same server asked without. */
  origin?: string;
  /** The shared engine the store and the baseline use (B1-B4); memory otherwise. */
  engine?: Engine;
  method: "GET" | "POST";
  path: string;
  body?: string;
  pets: number;
  /** The least ratio that holds; null for a row that states a cost and has no target (O4). */
  target: number | null;
}

/** The row's target, as the report takes it. */
const targetOf = (s: Scenario) => (s.target === null ? null : ({ on: "ratio", op: ">=", value: s.target } as const));

const SCENARIOS: Record<string, Scenario> = {
  H1: {
    label: "GET /v1/pets?limit=20, standalone server, memory, 10,000 pets",
    ours: "standalone",
    baseline: "node-list",
    method: "GET",
    path: "/v1/pets?limit=20",
    pets: 10_000,
    target: 0.85,
  },
  H2: {
    label: "GET /v1/pets?limit=20, hapi plugin, memory, 10,000 pets",
    ours: "hapi",
    baseline: "hapi-list",
    method: "GET",
    path: "/v1/pets?limit=20",
    pets: 10_000,
    target: 0.95,
  },
  H3: {
    label: "POST /v1/pets (valid body), standalone server, memory",
    ours: "standalone",
    baseline: "node-create",
    method: "POST",
    path: "/v1/pets",
    body: JSON.stringify({ name: "Rex", categoryId: 7 }),
    pets: 0,
    target: 0.85,
  },
  F1: {
    label: "GET /v1/pets?limit=20, fetch handler on Bun.serve, memory, 10,000 pets",
    ours: "fetch",
    baseline: "fetch-bare",
    runtime: "bun",
    method: "GET",
    path: "/v1/pets?limit=20",
    pets: 10_000,
    target: 0.85,
  },
  F3: {
    label: "GET /v1/pets?limit=20, fetch handler on Deno.serve, memory, 10,000 pets",
    ours: "fetch",
    baseline: "fetch-bare",
    runtime: "deno",
    method: "GET",
    path: "/v1/pets?limit=20",
    pets: 10_000,
    target: 0.85,
  },
  F2: {
    label: "GET /v1/pets?limit=20, Fastify plugin, memory, 10,000 pets",
    ours: "fastify",
    baseline: "fastify-list",
    method: "GET",
    path: "/v1/pets?limit=20",
    pets: 10_000,
    target: 0.95,
  },
  O1: {
    label: "H1 with metrics on (PETSTORE_METRICS_PORT, prom-client) against H1 with metrics off",
    ours: "standalone-metrics",
    baseline: "standalone",
    method: "GET",
    path: "/v1/pets?limit=20",
    pets: 10_000,
    target: 0.97,
  },
  O3: {
    label: "H1 with @opentelemetry/api installed and no tracer provider against H1 without the API (issue 48)",
    ours: "standalone",
    baseline: "standalone-no-otel",
    method: "GET",
    path: "/v1/pets?limit=20",
    pets: 10_000,
    target: 0.97,
  },
  O4: {
    label:
      "H1 with a tracer provider sampling every request (batch processor, exporter that drops) against H1 without one: the cost of traces",
    ours: "standalone-traced",
    baseline: "standalone",
    method: "GET",
    path: "/v1/pets?limit=20",
    pets: 10_000,
    target: null,
  },
  O2: {
    label:
      "H1 from a CORS-allowed page (Origin sent, CORS headers on the answer) against H1 without Origin, same server",
    ours: "standalone-cors",
    baseline: "same",
    origin: "https://shop.example",
    method: "GET",
    path: "/v1/pets?limit=20",
    pets: 10_000,
    target: 0.95,
  },
};

const PAGE_ON = (engine: Engine, target: number): Scenario => ({
  label: `GET /v1/pets?limit=20, standalone server, ${ENGINE_NAMES[engine]}, 1,000 pets`,
  ours: "standalone",
  baseline: "engine-list",
  engine,
  method: "GET",
  path: "/v1/pets?limit=20",
  pets: 1000,
  target,
});
SCENARIOS.B1 = PAGE_ON("redis", 0.85);
SCENARIOS.B2 = PAGE_ON("postgres", 0.8);
SCENARIOS.B3 = PAGE_ON("sqlite", 0.8);
// B3's page against the least any layout needs: one range read of a table of (id, pet JSON).
SCENARIOS.B5 = {
  ...PAGE_ON("sqlite", 0.85),
  label: "GET /v1/pets?limit=20, standalone server, SQLite, 1,000 pets, against one range read of (id, pet JSON)",
  baseline: "engine-list-least",
};

// Each engine's page against a bare server making the very reads the store makes for it and
// writing the same bytes (servers/engine.ts, "page"): what is left is the store's own work.
const SAME_READS = (engine: Engine): Scenario => ({
  ...PAGE_ON(engine, 0.9),
  label: `GET /v1/pets?limit=20, standalone server, ${ENGINE_NAMES[engine]}, 1,000 pets, against the same reads on a bare node:http server`,
  baseline: "engine-page",
});
SCENARIOS.P1 = SAME_READS("sqlite");
SCENARIOS.P2 = SAME_READS("redis");
SCENARIOS.P3 = SAME_READS("postgres");

// Rate limits on (one key, a limit it never reaches in a run) against the same server without them,
// on the engines whose count is shared (issue 47): the leases' round trips and the headers' cost.
const LIMITED_ON = (engine: Engine): Scenario => ({
  ...PAGE_ON(engine, 0.9),
  label: `GET /v1/pets?limit=20, standalone server, ${ENGINE_NAMES[engine]}, 1,000 pets, rate limit 1,000,000 a minute per key, against the same server without`,
  ours: "standalone-limited",
  baseline: "standalone",
});
SCENARIOS.R1 = LIMITED_ON("redis");
SCENARIOS.R2 = LIMITED_ON("postgres");

const id = process.argv[2] ?? "";
function pick(): Scenario {
  if (id === "B4") {
    const engine = process.argv[3] as Engine;
    if (!ENGINES.includes(engine)) throw new Error(`bench/http.ts: B4 takes redis, postgres or sqlite`);
    return {
      label: `POST /v1/pets (valid body, no Idempotency-Key), standalone server, ${ENGINE_NAMES[engine]}`,
      ours: "standalone",
      baseline: "engine-create",
      engine,
      method: "POST",
      path: "/v1/pets",
      body: JSON.stringify({ name: "Rex", categoryId: 7 }),
      pets: 0,
      target: 0.8,
    };
  }
  const found = SCENARIOS[id];
  if (found === undefined) {
    throw new Error(
      `bench/http.ts: unknown scenario ${JSON.stringify(id)} (H1, H2, H3, F1, F2, F3, O1, O2, O3, O4, B1, B2, B3, B5, P1, P2, P3, R1, R2 or B4 <engine>)`,
    );
  }
  return found;
}
const scenario = pick();
const PROFILE = process.argv.includes("--profile");
/** --instructions: each server runs under callgrind and the row is its instructions a request (bench/callgrind.ts). */
const INSTRUCTIONS = process.argv.includes("--instructions");
/** --functions (with --instructions): also where each side's instructions go, by function, on stderr (bench/functions.ts). */
const FUNCTIONS = INSTRUCTIONS && process.argv.includes("--functions");
const COUNTED_REQUESTS = QUICK ? 200 : 4000;
const COUNT_WARM_REQUESTS = QUICK ? 2000 : 20_000;
// Many short rounds rather than a few long ones: on a shared VM the speed drifts within seconds
// (the same CPU-bound loop here took from 390 to 535 ms, minute to minute), and a pair of rounds
// close in time sees the same drift. 16 pairs of 0.75 s: the time of 8 pairs of 1.5 s, with the
// two rounds of a pair twice as close and twice as many pairs for the median.
const ROUNDS = QUICK ? 1 : 16;
const ROUND_SECONDS = QUICK ? 1 : 0.75;
const WARM_SECONDS = QUICK ? 0 : 2;
const CONNECTIONS = 32;
const KEY = randomBytes(16).toString("hex");
const PROFILE_DIR = fileURLToPath(new URL("./profiles/", import.meta.url));

/** Headers that differ between any two answers, whoever sends them. */
const VOLATILE = new Set(["date", "connection", "keep-alive", "x-request-id", "transfer-encoding"]);

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One request as autocannon sends it (no compression asked for), with `origin` as Origin when given. */
async function ask(port: number, origin?: string): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${KEY}`, "accept-encoding": "identity" };
  if (origin !== undefined) headers.origin = origin;
  if (scenario.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`http://127.0.0.1:${port}${scenario.path}`, {
    method: scenario.method,
    headers,
    body: scenario.body,
    signal: AbortSignal.timeout(10_000),
  });
  const kept: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!VOLATILE.has(name)) kept[name] = value;
  });
  return { status: res.status, headers: kept, body: await res.text() };
}

/** Throws when the baseline's answer is not ours; returns a note on header names that differ. */
function compare(ours: Answer, base: Answer): string {
  if (ours.status !== base.status) throw new Error(`${id}: status ${ours.status} (ours) vs ${base.status} (baseline)`);
  // A created pet differs by its id (and so its Location); anything else must be the same bytes.
  const normalise = (a: Answer) => a.body.replace(/^\{"id":[0-9]+,/, '{"id":0,');
  if (normalise(ours) !== normalise(base)) {
    throw new Error(
      `${id}: bodies differ:\n  ours:     ${ours.body.slice(0, 300)}\n  baseline: ${base.body.slice(0, 300)}`,
    );
  }
  const names = (a: Answer) => Object.keys(a.headers).sort();
  const onlyOurs = names(ours).filter((n) => !(n in base.headers));
  const onlyBase = names(base).filter((n) => !(n in ours.headers));
  if (onlyOurs.length + onlyBase.length === 0) return "";
  return `; headers only ours sends: ${onlyOurs.join(", ") || "none"}, only the baseline: ${onlyBase.join(", ") || "none"}`;
}

interface Round {
  /** Requests a second. */
  rate: number;
  /** The server's CPU time per request, µs. */
  cpu: number;
}

/** A server under test or a baseline, whatever runs it. */
interface Server {
  port: number;
  /** The process to count (a Node child). */
  pid?: number | undefined;
  /** CPU time used so far, µs. */
  cpu(): Promise<number>;
  stop(): Promise<void>;
}

/** A Node child (bench/child.ts) once it is ready. */
async function nodeServer(file: string, args: string[], options: Parameters<typeof start>[2]): Promise<Server> {
  const child: ChildProcess = start(file, args, { ...options, ...(callgrind ? { execPath: callgrind.node } : {}) });
  try {
    const { port } = await waitFor(child, "ready", callgrind ? 600_000 : 60_000);
    return { port, pid: child.pid, cpu: () => cpuOf(child), stop: () => stop(child, callgrind ? 60_000 : 5000) };
  } catch (error) {
    await stop(child);
    throw error;
  }
}

/** A Bun or Deno child (bench/runtime.ts) once it is ready. */
async function runtimeServer(runtime: Runtime, mode: string, env: Record<string, string>): Promise<Server> {
  const child = await startRuntime(runtime, "./servers/fetch.ts", [mode], env);
  return { port: child.port, cpu: async () => child.cpu(), stop: () => child.stop() };
}

/**
 * One autocannon run of the scenario's request (with `origin` as Origin when given), for a time or
 * a number of requests; throws unless every request got a 2xx answer.
 */
async function cannon(port: number, run: { duration: number } | { amount: number }, origin?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${KEY}` };
  if (origin !== undefined) headers.origin = origin;
  if (scenario.body !== undefined) headers["content-type"] = "application/json";
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${scenario.path}`,
    method: scenario.method,
    headers,
    body: scenario.body,
    connections: CONNECTIONS,
    ...run,
    timeout: callgrind ? 60 : 10,
  });
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0 || result.requests.total === 0) {
    throw new Error(
      `${id}: port ${port}: ${result.requests.total} requests, ${result.errors} errors, ${result.timeouts} time-outs, ` +
        `${result.non2xx} non-2xx (${JSON.stringify(result.statusCodeStats)})`,
    );
  }
  return result;
}

/** One round against `server`: its requests a second and CPU time a request. */
async function load(server: Server, port: number, seconds: number, origin?: string): Promise<Round> {
  const cpuBefore = await server.cpu();
  const result = await cannon(port, { duration: seconds }, origin);
  const cpu = (await server.cpu()) - cpuBefore;
  return { rate: result.requests.total / result.duration, cpu: cpu / result.requests.total };
}

/** The servers run under callgrind (--instructions), or undefined. */
let callgrind: Callgrind | undefined;

/** --instructions: each side's instructions a request, counted after a warm-up, and their ratio. */
async function countedRow(ours: Server, base: Server, headerNote: string) {
  const s = scenario;
  const count = async (server: Server, origin?: string) => {
    await cannon(server.port, { amount: COUNT_WARM_REQUESTS }, origin); // the JIT's tiers settle first
    const counted = () => cannon(server.port, { amount: COUNTED_REQUESTS }, origin).then(() => {});
    const { instructions, part } = await countInstructions(callgrind as Callgrind, server.pid as number, counted);
    const byFunction = FUNCTIONS ? countByFunction(part, server.pid as number, COUNTED_REQUESTS) : undefined;
    return { perRequest: instructions / COUNTED_REQUESTS, byFunction };
  };
  const oursSide = await count(ours, s.origin);
  const baseSide = await count(base);
  const oursCount = oursSide.perRequest;
  const baseCount = baseSide.perRequest;
  if (oursSide.byFunction && baseSide.byFunction) {
    console.error(`${id}: ${describeDifference(oursSide.byFunction, baseSide.byFunction)}`);
    // BENCH_DUMP=<file>: both sides' instructions a request by function, as JSON, for a closer look.
    const dump = process.env.BENCH_DUMP;
    if (dump) writeFileSync(dump, JSON.stringify({ ours: [...oursSide.byFunction], base: [...baseSide.byFunction] }));
  }
  return row({
    id,
    scenario: s.label,
    ours: Math.round(oursCount),
    baseline: Math.round(baseCount),
    unit: "instructions a request",
    ratio: baseCount / oursCount,
    target: targetOf(s),
    note:
      `callgrind: ${COUNTED_REQUESTS} requests counted after ${COUNT_WARM_REQUESTS} of warm-up, ${CONNECTIONS} connections, ` +
      `Node ${process.version}; the kernel's work (and a backend's) is not counted` +
      headerNote,
  });
}

/** The storage spec of a bench location, as PETSTORE_STORAGE takes it. */
function specOf(location: Location): string {
  switch (location.kind) {
    case "redis":
      return `${location.url}?namespace=${location.namespace}`;
    case "postgres":
      return `${location.url}?namespace=${location.table}`;
    case "sqlite":
      return `sqlite:${location.path}?namespace=${location.table}`;
    case "memory":
      return "memory";
  }
}

async function main() {
  const s = scenario;
  if (s.runtime !== undefined && runtimeBinary(s.runtime) === undefined) {
    const why = `${s.runtime} is not installed (npm ci installs the ${s.runtime} devDependency)`;
    if (process.env.CI === "true") throw new Error(why);
    console.error(`SKIPPED: ${id}: ${why}`);
    const target = targetOf(s);
    return [unavailable(id, s.label, "req/s", target, "skipped", why)];
  }
  if (INSTRUCTIONS) {
    const why = s.runtime !== undefined ? "callgrind counts Node servers only" : callgrindMissing();
    if (why !== undefined) {
      console.error(`SKIPPED: ${id}: ${why}`);
      return [unavailable(id, s.label, "instructions a request", null, "skipped", why)];
    }
    callgrind = prepareCallgrind();
  }
  const children: Server[] = [];
  let bench: BenchStorage | undefined;
  try {
    const env: Record<string, string> = { BENCH_KEY: KEY, BENCH_PETS: String(s.pets) };
    if (s.engine !== undefined) {
      try {
        bench = await openBench(s.engine, id.toLowerCase());
      } catch (error) {
        return skipped(error, [{ id, scenario: s.label, unit: "req/s", target: targetOf(s) }]);
      }
      if (s.pets > 0) await fill(bench, s.pets);
      // The servers open the namespace themselves; this process's connection is not needed.
      await bench.storage.close();
      env.BENCH_STORAGE = specOf(bench.location);
      env.BENCH_LOCATION = JSON.stringify(bench.location);
      // Under callgrind a storage call takes far longer than its 2 s default: it must be counted, not refused.
      if (INSTRUCTIONS) env.BENCH_STORAGE_TIMEOUT_MS = "60000";
    }
    // One profile a thread (tsx runs a loader thread): the main thread's is the big one.
    const profile = (side: string) => [
      ...(PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}${id}-${side}`] : []),
      ...(FUNCTIONS ? PERF_MAP_FLAGS : []),
    ];
    // BENCH_OURS=node-http swaps the server under test, to locate a cost (see servers/ours.ts).
    const oursMode = process.env.BENCH_OURS ?? s.ours;
    // BENCH_OURS_ROOT: our server from another checkout (a worktree of another commit: run.ts --against).
    const oursFile = process.env.BENCH_OURS_ROOT
      ? pathToFileURL(join(process.env.BENCH_OURS_ROOT, "bench/servers/ours.ts")).href
      : "./servers/ours.ts";
    const ours =
      s.runtime === undefined
        ? await nodeServer(oursFile, [oursMode], { env, nodeFlags: profile("ours") })
        : await runtimeServer(s.runtime, "ours", env);
    children.push(ours);
    const oursPort = ours.port;
    const reference = await ask(oursPort, s.origin);
    const baseEnv = { ...env, BENCH_REFERENCE: JSON.stringify({ ...reference, path: s.path }) };
    // O1's reference is our own server (metrics off): servers/ours.ts, not a bare baseline; B1-B4's
    // a bare server on the engine (servers/engine.ts).
    const onEngine = s.baseline.startsWith("engine-");
    const baseFile = onEngine
      ? "./servers/engine.ts"
      : s.baseline.startsWith("standalone")
        ? "./servers/ours.ts"
        : "./servers/baseline.ts";
    const baseMode = onEngine ? s.baseline.slice("engine-".length) : s.baseline;
    // O2's baseline is the same server, asked without Origin.
    const base =
      s.baseline === "same"
        ? ours
        : s.runtime === undefined
          ? await nodeServer(baseFile, [baseMode], { env: baseEnv, nodeFlags: profile("baseline") })
          : await runtimeServer(s.runtime, "bare", baseEnv);
    if (base !== ours) children.push(base);
    const basePort = base.port;
    const headerNote = compare(reference, await ask(basePort));
    if (callgrind) return [await countedRow(ours, base, headerNote)];

    if (WARM_SECONDS > 0) {
      await load(ours, oursPort, WARM_SECONDS, s.origin);
      await load(base, basePort, WARM_SECONDS);
    }
    const [oursRounds, baseRounds] = await alternating(
      ROUNDS,
      () => load(ours, oursPort, ROUND_SECONDS, s.origin),
      () => load(base, basePort, ROUND_SECONDS),
    );
    // The verdict is on the median of the pairs' ratios: a pair disturbed by the machine is one
    // outlier among eight, where a ratio of medians would mix rounds run at different speeds.
    const ratios = oursRounds.map((r, i) => r.rate / (baseRounds[i] as Round).rate);
    if (process.env.BENCH_ROUNDS === "1") {
      for (const [i, r] of oursRounds.entries()) {
        const b = baseRounds[i] as Round;
        console.error(
          `${id} round ${i}: ours ${r.rate.toFixed(0)} req/s ${r.cpu.toFixed(1)} µs, baseline ${b.rate.toFixed(0)} req/s ${b.cpu.toFixed(1)} µs`,
        );
      }
    }
    const oursCpu = median(oursRounds.map((r) => r.cpu));
    const baseCpu = median(baseRounds.map((r) => r.cpu));
    const engineNote = s.engine === undefined ? "" : `; ${absolute(oursRounds, baseRounds)}`;
    return [
      row({
        id,
        scenario: s.label,
        ours: median(oursRounds.map((r) => r.rate)),
        baseline: median(baseRounds.map((r) => r.rate)),
        unit: "req/s",
        ratio: median(ratios),
        target: targetOf(s),
        note:
          `${ROUNDS}×${ROUND_SECONDS} s per side, ${CONNECTIONS} connections; ratio: median of the round pairs' ${spread(ratios)}; ` +
          `server CPU per request ${oursCpu.toFixed(0)} µs vs ${baseCpu.toFixed(0)} µs (ratio ${(baseCpu / oursCpu).toFixed(2)})` +
          engineNote +
          headerNote,
      }),
    ];
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await bench?.drop();
    if (!process.env.BENCH_KEEP) callgrind?.remove();
    else console.error("kept", callgrind?.dir);
    if (FUNCTIONS && !process.env.BENCH_KEEP)
      for (const child of children) if (child.pid !== undefined) removePerfMap(child.pid);
  }
}

/** The absolute rates of both sides, for the engines' rows: what this machine gave. */
function absolute(ours: Round[], base: Round[]): string {
  const rates = (rounds: Round[]) => rounds.map((r) => r.rate.toFixed(0)).join(", ");
  return `req/s a round, ours: ${rates(ours)}; baseline: ${rates(base)}`;
}

finish(await main());
