/**
 * The numbers of docs/scaling.md: pages/s and creates/s from 1, 2 and 4 standalone server
 * processes on one store of each shared backend (one Redis, one Redis Cluster slot, one Postgres,
 * one SQLite file), with the CPU time a request costs the servers, the backend and the load
 * generator, which tells what tops out first. Not a bench row (nothing to compare within a run):
 * `npx tsc -p tsconfig.build.json && npx tsx bench/scaling.ts [--quick]`.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import autocannon from "autocannon";
import { openStorage } from "../lib/storage/open.ts";
import { type OwnCluster, startRedisCluster } from "../test/support/redis-cluster.ts";
import { type BenchStorage, openBench } from "./backends.ts";
import { cpuOf, start, stop, waitFor } from "./child.ts";
import { benchPet } from "./fill.ts";
import { QUICK } from "./measure.ts";
import { startSingleRedis } from "./redis-servers.ts";

const KEY = randomBytes(16).toString("hex");
const SECONDS = QUICK ? 1 : 5;
const WARM_SECONDS = QUICK ? 0 : 1;
const CONNECTIONS = 32;
const PROCESSES = [1, 2, 4];
const PETS = 1000;

interface Backend {
  label: string;
  spec: string;
  /** CPU time the backend's processes used so far, µs (NaN when it runs inside the servers). */
  cpu(): Promise<number>;
  /** Measure creates only (pages are the same as another backend's). */
  createsOnly?: boolean;
}

/** user + system time of a process from /proc, µs. */
function readProcessCpu(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return ((Number(fields[11]) + Number(fields[12])) / 100) * 1e6;
}

/** The CPU time of every process named `name`, µs (processes that end meanwhile drop out). */
function sumCpuOf(name: string): number {
  let total = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === name) total += readProcessCpu(Number(pid));
    } catch {}
  }
  return total;
}

/** Busy and total jiffies of the whole machine. */
function readMachineTime(): { busy: number; total: number } {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}

/** A Redis server's own CPU time (INFO cpu), µs. */
async function readRedisCpu(command: (...args: string[]) => Promise<string>): Promise<number> {
  const info = await command("INFO", "cpu");
  const seconds = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1]);
  return (seconds("used_cpu_sys") + seconds("used_cpu_user")) * 1e6;
}

async function fillSpec(spec: string): Promise<void> {
  const storage = await openStorage(spec, { operationTimeoutMs: 30_000 });
  for (let id = 1; id <= PETS; id += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, PETS - id + 1) }, (_, i) => {
        const { name, categoryId, status } = benchPet(id + i);
        return storage.create({ name, categoryId, status });
      }),
    );
  }
  await storage.close();
}

interface Server {
  child: ChildProcess;
  port: number;
}

async function startServers(spec: string, count: number): Promise<Server[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const child = start("./servers/ours.ts", ["standalone"], {
        env: { BENCH_KEY: KEY, BENCH_PETS: "0", BENCH_STORAGE: spec },
      });
      return { child, port: (await waitFor(child, "ready", 60_000)).port };
    }),
  );
}

/** All servers loaded at once (the connections shared out); requests a second and CPU per request. */
async function loadAll(backend: Backend, running: Server[], op: "page" | "create", seconds: number) {
  const before = {
    servers: await Promise.all(running.map((s) => cpuOf(s.child))),
    backend: await backend.cpu(),
    machine: readMachineTime(),
    us: process.cpuUsage(),
  };
  const results = await Promise.all(
    running.map((s) =>
      autocannon({
        url: `http://127.0.0.1:${s.port}/v1/pets${op === "page" ? "?limit=20" : ""}`,
        method: op === "page" ? "GET" : "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        ...(op === "create" ? { body: JSON.stringify({ name: "Rex", categoryId: 7 }) } : {}),
        connections: CONNECTIONS / running.length,
        duration: seconds,
        timeout: 10,
      }),
    ),
  );
  const requests = results.reduce((sum, r) => sum + r.requests.total, 0);
  const failed = results.reduce((sum, r) => sum + r.errors + r.timeouts + r.non2xx, 0);
  const serverCpu = (await Promise.all(running.map((s) => cpuOf(s.child)))).reduce((a, b) => a + b, 0);
  const own = process.cpuUsage(before.us);
  const after = readMachineTime();
  const per = (us: number) => us / requests;
  return {
    rate: requests / (results[0]?.duration ?? seconds),
    failed,
    serverUs: per(serverCpu - before.servers.reduce((a, b) => a + b, 0)),
    backendUs: per((await backend.cpu()) - before.backend),
    loaderUs: per(own.user + own.system),
    busy: (after.busy - before.machine.busy) / (after.total - before.machine.total),
  };
}

async function main() {
  const cluster: OwnCluster = await startRedisCluster({ persistence: false });
  const single = await startSingleRedis();
  const benches: BenchStorage[] = [];
  const ns = `petscale_${process.pid}`;
  try {
    const { createClient } = await import("@keyv/redis");
    const singleClient = createClient({ url: single.url });
    await singleClient.connect();
    const postgres = await openBench("postgres", "scale");
    const sqlite = await openBench("sqlite", "scale");
    benches.push(postgres, sqlite);
    await Promise.all([postgres.storage.close(), sqlite.storage.close()]);
    /** The CPU of the primary of `name`'s slot and of its replicas, which copy every write. */
    const primaryOf = async (name: string) => {
      const primary = await cluster.primaryOf(`{${name}}`);
      const nodes = [primary, ...(await cluster.replicasOf(primary))];
      return async () => {
        const each = await Promise.all(nodes.map((port) => readRedisCpu((...args) => cluster.command(port, ...args))));
        return each.reduce((a, b) => a + b, 0);
      };
    };
    const pg = postgres.location as { url: string; table: string };
    const file = sqlite.location as { path: string; table: string };
    const list: Backend[] = [
      {
        label: "one Redis",
        spec: `${single.url}?namespace=${ns}`,
        cpu: () => readRedisCpu(async (...args) => String(await singleClient.sendCommand(args))),
      },
      {
        label: "one Redis Cluster slot (primary + replica)",
        spec: cluster.spec(`namespace=${ns}`),
        cpu: await primaryOf(ns),
      },
      {
        label: 'one Redis Cluster slot, durability "replicated" (primary + replica)',
        spec: cluster.spec(`namespace=${ns}_r&durability=replicated`),
        cpu: await primaryOf(`${ns}_r`),
        createsOnly: true,
      },
      { label: "one Postgres", spec: `${pg.url}?namespace=${pg.table}`, cpu: async () => sumCpuOf("postgres") },
      { label: "one SQLite file", spec: `sqlite:${file.path}?namespace=${file.table}`, cpu: async () => Number.NaN },
    ];
    const lines: string[] = [];
    for (const backend of list) {
      if (!backend.createsOnly) await fillSpec(backend.spec);
      for (const count of PROCESSES) {
        const running = await startServers(backend.spec, count);
        try {
          for (const op of backend.createsOnly ? (["create"] as const) : (["page", "create"] as const)) {
            if (WARM_SECONDS > 0) await loadAll(backend, running, op, WARM_SECONDS);
            const m = await loadAll(backend, running, op, SECONDS);
            const line =
              `| ${backend.label} | ${count} | ${op} | ${Math.round(m.rate).toLocaleString("en")} | ` +
              `${m.serverUs.toFixed(0)} | ${Number.isNaN(m.backendUs) ? "(in the servers)" : m.backendUs.toFixed(0)} | ` +
              `${m.loaderUs.toFixed(0)} | ${Math.round(m.busy * 100)}% |${m.failed > 0 ? ` ${m.failed} failed` : ""}`;
            console.log(line);
            lines.push(line);
          }
        } finally {
          await Promise.all(running.map((s) => stop(s.child)));
        }
      }
    }
    singleClient.destroy();
    console.log(
      "\n| backend | processes | request | req/s | servers' CPU µs/req | backend CPU µs/req | load generator µs/req | machine busy |",
    );
    console.log("|---|--:|---|--:|--:|--:|--:|--:|");
    for (const line of lines) console.log(line);
  } finally {
    await Promise.all(benches.map((b) => b.drop()));
    await Promise.all([cluster.stop(), single.stop()]);
  }
}

await main();
