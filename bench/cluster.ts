/**
 * C1-C3: the standalone server on one slot of a Redis Cluster (3 primaries, 3 replicas) beside the
 * same server on a single Redis, both made here without persistence, each server in its own child
 * process, loaded in alternating rounds by autocannon as bench/http.ts loads its rows. C1 a page
 * (1,000 pets each), C2 a create, C3 a create with durability "replicated" against one without,
 * both on the cluster. Run by bench/run.ts (`npm run bench -- C1`), which builds dist/ first.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import autocannon from "autocannon";
import { redisStorage } from "../lib/storage/redis/index.ts";
import { redisClusterInstallable, startRedisCluster } from "../test/support/redis-cluster.ts";
import { Unavailable } from "./backends.ts";
import { cleanupOnInterrupt, cpuOf, finish, start, stop, waitFor } from "./child.ts";
import { benchPet } from "./fill.ts";
import { alternating, median, QUICK, skipped, spread } from "./measure.ts";
import { startSingleRedis } from "./redis-servers.ts";
import { type Row, row, type Target } from "./report.ts";

const ROUNDS = QUICK ? 1 : 16;
const ROUND_SECONDS = QUICK ? 1 : 0.75;
const WARM_SECONDS = QUICK ? 0 : 2;
const CONNECTIONS = 32;
const PETS = 1000;
const KEY = randomBytes(16).toString("hex");
const CREATE_BODY = JSON.stringify({ name: "Rex", categoryId: 7 });

interface Scenario {
  id: string;
  label: string;
  method: "GET" | "POST";
  path: string;
  target: number;
}

const SCENARIOS: Scenario[] = [
  {
    id: "C1",
    label: "GET /v1/pets?limit=20, Redis Cluster slot vs one Redis, 1,000 pets",
    method: "GET",
    path: "/v1/pets?limit=20",
    target: 0.9,
  },
  { id: "C2", label: "POST /v1/pets, Redis Cluster slot vs one Redis", method: "POST", path: "/v1/pets", target: 0.7 },
  {
    id: "C3",
    label: 'POST /v1/pets, Redis Cluster, durability "replicated" vs "async"',
    method: "POST",
    path: "/v1/pets",
    target: 0.7,
  },
];

const targetOf = (s: Scenario): Target => ({ on: "ratio", op: ">=", value: s.target });

interface Server {
  child: ChildProcess;
  port: number;
}

/** Our standalone server (bench/servers/ours.ts) on `storage`. */
async function startServer(storage: string): Promise<Server> {
  const child = start("./servers/ours.ts", ["standalone"], {
    env: { BENCH_KEY: KEY, BENCH_PETS: "0", BENCH_STORAGE: storage },
  });
  try {
    return { child, port: (await waitFor(child, "ready", 60_000)).port };
  } catch (error) {
    await stop(child);
    throw error;
  }
}

/** One request's answer, with a created pet's id made 0 (both sides must answer the same). */
async function askOnce(port: number, s: Scenario): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}${s.path}`, {
    method: s.method,
    headers: { authorization: `Bearer ${KEY}`, ...(s.method === "POST" ? { "content-type": "application/json" } : {}) },
    ...(s.method === "POST" ? { body: CREATE_BODY } : {}),
    signal: AbortSignal.timeout(10_000),
  });
  return `${res.status} ${(await res.text()).replace(/^\{"id":[0-9]+,/, '{"id":0,')}`;
}

interface Round {
  rate: number;
  /** The server's CPU time per request, µs. */
  cpu: number;
}

/** One autocannon run; throws unless every request got a 2xx. */
async function load(target: Server, s: Scenario, seconds: number): Promise<Round> {
  const cpuBefore = await cpuOf(target.child);
  const result = await autocannon({
    url: `http://127.0.0.1:${target.port}${s.path}`,
    method: s.method,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    ...(s.method === "POST" ? { body: CREATE_BODY } : {}),
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
  });
  if (result.errors + result.timeouts + result.non2xx > 0 || result.requests.total === 0) {
    throw new Error(
      `${s.id}: ${result.requests.total} requests, ${result.errors} errors, ${result.timeouts} time-outs, ${result.non2xx} non-2xx`,
    );
  }
  const cpu = (await cpuOf(target.child)) - cpuBefore;
  return { rate: result.requests.total / result.duration, cpu: cpu / result.requests.total };
}

/** `ours` against `base` in alternating rounds: the row. */
async function measure(s: Scenario, ours: Server, base: Server, baseName: string): Promise<Row> {
  const [a, b] = await Promise.all([askOnce(ours.port, s), askOnce(base.port, s)]);
  if (a !== b)
    throw new Error(`${s.id}: the answers differ:\n  ours: ${a.slice(0, 300)}\n  ${baseName}: ${b.slice(0, 300)}`);
  if (WARM_SECONDS > 0) {
    await load(ours, s, WARM_SECONDS);
    await load(base, s, WARM_SECONDS);
  }
  const [oursRounds, baseRounds] = await alternating(
    ROUNDS,
    () => load(ours, s, ROUND_SECONDS),
    () => load(base, s, ROUND_SECONDS),
  );
  const ratios = oursRounds.map((r, i) => r.rate / (baseRounds[i] as Round).rate);
  const cpu = (rounds: Round[]) => median(rounds.map((r) => r.cpu)).toFixed(0);
  const rates = (rounds: Round[]) => rounds.map((r) => r.rate.toFixed(0)).join(", ");
  return row({
    id: s.id,
    scenario: s.label,
    ours: median(oursRounds.map((r) => r.rate)),
    baseline: median(baseRounds.map((r) => r.rate)),
    unit: "req/s",
    ratio: median(ratios),
    target: targetOf(s),
    note:
      `baseline: ${baseName}; ${ROUNDS}×${ROUND_SECONDS} s per side, ${CONNECTIONS} connections; ratio: median of the ` +
      `round pairs' ${spread(ratios)}; server CPU per request ${cpu(oursRounds)} µs vs ${cpu(baseRounds)} µs; ` +
      `req/s a round, ours: ${rates(oursRounds)}; baseline: ${rates(baseRounds)}`,
  });
}

/** Fills a fresh store of `storage` with the bench's pets 1..n, through its own creates. */
async function fillStore(storage: Awaited<ReturnType<typeof redisStorage>>, n: number): Promise<void> {
  for (let id = 1; id <= n; id += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, n - id + 1) }, (_, i) => {
        const { name, categoryId, status } = benchPet(id + i);
        return storage.create({ name, categoryId, status });
      }),
    );
  }
}

async function main(): Promise<Row[]> {
  if (!redisClusterInstallable()) {
    const error = new Unavailable("redis-server or redis-cli is not installed: no Redis Cluster to measure");
    return skipped(
      error,
      SCENARIOS.map((s) => ({ id: s.id, scenario: s.label, unit: "req/s", target: targetOf(s) })),
    );
  }
  const cluster = await startRedisCluster({ persistence: false });
  const single = await startSingleRedis().catch(async (error) => {
    await cluster.stop();
    throw error;
  });
  const children: Server[] = [];
  const cleanup = async () => {
    await Promise.all(children.map((s) => stop(s.child)));
    await Promise.all([cluster.stop(), single.stop()]);
  };
  cleanupOnInterrupt(cleanup);
  try {
    // Pets created in order, as the other rows' bulk loads write them: ids 1..1,000 in both stores.
    const ns = `petbench_${process.pid}`;
    for (const storage of [
      await redisStorage({ url: single.url, namespace: ns }),
      await redisStorage({ cluster: { rootNodes: cluster.rootNodes }, namespace: ns }),
    ]) {
      await fillStore(storage, PETS);
      await storage.close();
    }
    const onSingle = await startServer(`${single.url}?namespace=${ns}`);
    children.push(onSingle);
    const onCluster = await startServer(cluster.spec(`namespace=${ns}`));
    children.push(onCluster);
    const [page, create, replicated] = SCENARIOS as [Scenario, Scenario, Scenario];
    const rows = [
      await measure(page, onCluster, onSingle, "one Redis"),
      await measure(create, onCluster, onSingle, "one Redis"),
    ];
    await stop(onSingle.child);
    const durable = await startServer(cluster.spec(`namespace=${ns}_durable&durability=replicated`));
    children.push(durable);
    rows.push(await measure(replicated, durable, onCluster, 'the cluster, durability "async"'));
    return rows;
  } finally {
    await cleanup();
  }
}

finish(await main());
