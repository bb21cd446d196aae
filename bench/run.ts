/**
 * `npm run bench`: runs every scenario of issue 6, one child process at a time, prints the table
 * of ratios and writes bench/results.json (a run of only some scenarios writes none). `npm run bench -- --quick` runs each for about a
 * second (proves the programs work; asserts nothing about speed, writes no file).
 *
 * Flags: --quick; --profile (CPU profiles of the HTTP servers in bench/profiles/); --instructions
 * (the HTTP rows only, in instructions a request counted by callgrind: bench/callgrind.ts), with
 * --functions also by function on stderr (bench/functions.ts); --strict (exit 1
 * when a target is missed, too); --out <file>; --readme (puts the table in README.md's Performance
 * section, between its bench:results markers); scenario ids to run only some (`-- H1 S2`);
 * --against <commit> [--pairs N] (the HTTP rows named, by default H1 H3 P1 P2 P3, alternated with
 * that commit's server in pairs: bench/against.ts).
 * Exit code 1 when a program crashed or hung (or, with CI=true, a service was missing); 2 for flags
 * that do not go together.
 */
import { execSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { AGAINST_ROWS, againstTable, compareAgainst, prepareWorktree, removeWorktree } from "./against.ts";
import { BACKENDS } from "./backends.ts";
import { type StartOptions, start, stop, waitFor } from "./child.ts";
import { writeReadme } from "./readme.ts";
import { markdownTable, type Results, type Row, type Target, unavailable } from "./report.ts";

interface Job {
  id: string;
  /** What the rows will be called, for a row that reports a crash. */
  scenario: string;
  unit: string;
  target: Target | null;
  program: string;
  args: string[];
  options?: StartOptions;
  timeoutMs: number;
}

const args = process.argv.slice(2);
const QUICK = args.includes("--quick");
const STRICT = args.includes("--strict");
const PROFILE = args.includes("--profile");
const README = args.includes("--readme");
const INSTRUCTIONS = args.includes("--instructions");
const FUNCTIONS = INSTRUCTIONS && args.includes("--functions");
const outIndex = args.indexOf("--out");
const againstIndex = args.indexOf("--against");
const AGAINST = againstIndex === -1 ? undefined : args[againstIndex + 1];
const pairsIndex = args.indexOf("--pairs");
const PAIRS = pairsIndex === -1 ? 5 : Number(args[pairsIndex + 1]);
const only = args.filter(
  (a, i) => /^[A-Z][0-9]$/.test(a) && !["--out", "--against", "--pairs"].includes(args[i - 1] ?? ""),
);
// Only a full run of everything replaces bench/results.json (unless --out says where).
const OUT =
  outIndex === -1 ? (QUICK || INSTRUCTIONS || only.length > 0 ? undefined : "results.json") : args[outIndex + 1];
const mode = QUICK ? ["--quick"] : [];
// The HTTP rows' programs, and how long one may take: under callgrind a server runs many times slower.
const httpArgs = [
  ...mode,
  ...(PROFILE ? ["--profile"] : []),
  ...(INSTRUCTIONS ? ["--instructions"] : []),
  ...(FUNCTIONS ? ["--functions"] : []),
];
const httpTimeout = (ms: number) => (INSTRUCTIONS ? 900_000 : ms);
// Checked before anything runs: a table of some scenarios, or of quick ones, must not replace the README's.
if (README && (QUICK || INSTRUCTIONS || only.length > 0 || AGAINST !== undefined)) {
  console.error(
    "bench: --readme takes a full run of every scenario (no --quick, no --instructions, no --against, no scenario ids)",
  );
  process.exit(2);
}
if (AGAINST !== undefined && (AGAINST.startsWith("--") || INSTRUCTIONS || !Number.isSafeInteger(PAIRS) || PAIRS < 1)) {
  console.error("bench: --against takes a commit (and --pairs a count from 1), without --instructions");
  process.exit(2);
}

function jobs(): Job[] {
  const list: Job[] = [];
  // O4 states the cost of traces sampled in full: no target.
  const http = { H1: 0.85, H2: 0.95, H3: 0.85, F1: 0.85, F2: 0.95, F3: 0.85, O1: 0.97, O2: 0.95, O3: 0.97, O4: null };
  for (const [id, ratio] of Object.entries(http)) {
    list.push({
      id,
      scenario: id,
      unit: "req/s",
      target: ratio === null ? null : { on: "ratio", op: ">=", value: ratio },
      program: "./http.ts",
      args: [id, ...httpArgs],
      timeoutMs: httpTimeout(QUICK ? 60_000 : 120_000),
    });
  }
  // The shared engines against bare servers on them (issue 21): a page, then creates.
  const pages = { B1: 0.85, B2: 0.8, B3: 0.8, B5: 0.85, P1: 0.9, P2: 0.9, P3: 0.9, R1: 0.9, R2: 0.9 };
  for (const [id, ratio] of Object.entries(pages)) {
    list.push({
      id,
      scenario: id,
      unit: "req/s",
      target: { on: "ratio", op: ">=", value: ratio },
      program: "./http.ts",
      args: [id, ...httpArgs],
      timeoutMs: httpTimeout(QUICK ? 90_000 : 150_000),
    });
  }
  for (const engine of ["redis", "postgres", "sqlite"]) {
    list.push({
      id: "B4",
      scenario: `B4 ${engine}`,
      unit: "req/s",
      target: { on: "ratio", op: ">=", value: 0.8 },
      program: "./http.ts",
      args: ["B4", engine, ...httpArgs],
      timeoutMs: httpTimeout(QUICK ? 90_000 : 150_000),
    });
  }
  for (const backend of BACKENDS) {
    list.push({
      id: "S1",
      scenario: `${backend}, listPets`,
      unit: "µs/page",
      target: { on: "ratio", op: "<=", value: 1.5 },
      program: "./scan.ts",
      args: [backend, ...mode],
      timeoutMs: QUICK ? 60_000 : 150_000,
    });
  }
  for (const backend of BACKENDS) {
    list.push({
      id: "S2",
      scenario: `${backend}, createPet, 64 in flight`,
      unit: "ops/s",
      target: backend === "memory" ? { on: "ours", op: ">=", value: 100_000 } : null,
      program: "./create.ts",
      args: [backend, ...mode],
      timeoutMs: 60_000,
    });
  }
  list.push({
    id: "W1",
    scenario: "standalone server on SQLite, 2 workers vs 1",
    unit: "req/s",
    target: availableParallelism() >= 4 ? { on: "ratio", op: ">=", value: 1.6 } : null,
    program: "./workers.ts",
    args: mode,
    timeoutMs: QUICK ? 90_000 : 180_000,
  });
  list.push({
    id: "K1",
    scenario: "Cloudflare Worker bundle, minified",
    unit: "KB",
    target: { on: "ours", op: "<=", value: 150 },
    program: "./bundle.ts",
    args: [],
    timeoutMs: 60_000,
  });
  list.push({
    id: "K2",
    scenario: "petstore-lib/client bundle, minified",
    unit: "KB",
    target: { on: "ours", op: "<=", value: 15 },
    program: "./bundle.ts",
    args: ["client"],
    timeoutMs: 60_000,
  });
  list.push({
    id: "M1",
    scenario: "memory, heap a stored pet",
    unit: "bytes/pet",
    target: { on: "ours", op: "<=", value: 400 },
    program: "./heap.ts",
    args: mode,
    options: { nodeFlags: ["--expose-gc"] },
    timeoutMs: 90_000,
  });
  list.push({
    id: "T1",
    scenario: "startTestServer() ready, first start",
    unit: "ms",
    target: { on: "ours", op: "<=", value: 100 },
    program: "./testkit.ts",
    args: mode,
    timeoutMs: 30_000,
  });
  const idempotency = { program: "./idempotency.ts", options: { nodeFlags: ["--expose-gc"] } };
  list.push({
    ...idempotency,
    id: "I1",
    scenario: "POST with a fresh Idempotency-Key vs without, memory, over HTTP (and I3: a replay vs a create)",
    unit: "req/s",
    target: { on: "ratio", op: ">=", value: 0.85 },
    args: ["http", ...mode],
    timeoutMs: QUICK ? 60_000 : 150_000,
  });
  for (const backend of BACKENDS.filter((b) => b !== "memory")) {
    list.push({
      ...idempotency,
      id: "I2",
      scenario: `${backend}, createPet with a fresh Idempotency-Key vs without`,
      unit: "ops/s",
      target: { on: "ratio", op: ">=", value: 0.7 },
      args: ["storage", backend, ...mode],
      timeoutMs: QUICK ? 60_000 : 120_000,
    });
  }
  list.push({
    ...idempotency,
    id: "M2",
    scenario: "memory, heap of an idempotency record",
    unit: "bytes/key",
    target: { on: "ours", op: "<=", value: 200 },
    args: ["heap", ...mode],
    timeoutMs: 90_000,
  });
  // A Redis Cluster slot beside one Redis (issue 30): C1 a page, C2 a create, C3 a create with
  // durability "replicated" against one without; one program, one cluster, all three rows.
  list.push({
    id: "C1",
    scenario: "Redis Cluster slot vs one Redis: a page (C1), a create (C2); C3 durability replicated vs async",
    unit: "req/s",
    target: { on: "ratio", op: ">=", value: 0.9 },
    program: "./cluster.ts",
    args: mode,
    timeoutMs: QUICK ? 120_000 : 240_000,
  });
  // Moving a store (issue 46): SQLite exported, then imported into Postgres and into Redis.
  for (const target of ["postgres", "redis"]) {
    list.push({
      id: "X1",
      scenario: `X1 ${target}`,
      unit: "s",
      target: { on: "ours", op: "<=", value: 60 },
      program: "./transfer.ts",
      args: [target, ...mode],
      timeoutMs: QUICK ? 60_000 : 300_000,
    });
  }
  // Validators and compression (issue 59): V1 a revalidated page (304) against the full page; V2,
  // V3 a compressed 100-pet page against the plain one, in requests a second and in bytes.
  list.push({
    id: "V1",
    scenario: "a 304 against the page it replaces (V1); a compressed page against the plain one (V2 req/s, V3 bytes)",
    unit: "req/s",
    target: { on: "ratio", op: ">=", value: 1 },
    program: "./validators.ts",
    args: mode,
    timeoutMs: QUICK ? 60_000 : 150_000,
  });
  // I3 comes from the I1 program, C2 and C3 from C1's, V2 and V3 from V1's: asking for one runs that one.
  const wanted = [...only];
  if (only.includes("I3")) wanted.push("I1");
  if (only.includes("C2") || only.includes("C3")) wanted.push("C1");
  if (only.includes("V2") || only.includes("V3")) wanted.push("V1");
  // Instructions are counted for the HTTP rows (Node servers against Node baselines) only.
  const counted = INSTRUCTIONS ? list.filter((job) => job.program === "./http.ts") : list;
  return counted.filter((job) => wanted.length === 0 || wanted.includes(job.id));
}

/** Runs one program (with `env` added); a crash or a hang becomes one "error" row. */
async function runJob(job: Job, env: Record<string, string> = {}): Promise<Row[]> {
  const child = start(job.program, job.args, {
    ...job.options,
    env: { ...job.options?.env, ...env },
    showStdout: true,
  });
  try {
    return (await waitFor(child, "result", job.timeoutMs)).rows;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return [unavailable(job.id, job.scenario, job.unit, job.target, "error", `crashed or hung: ${reason}`)];
  } finally {
    // Time for a program cut short to remove what it wrote (a million Redis keys take seconds).
    await stop(child, 30_000);
  }
}

/** The machine the numbers come from. */
function machine() {
  let cpu = cpus()[0]?.model ?? "unknown";
  try {
    cpu = /^model name\s*:\s*(.*)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? cpu;
  } catch {}
  let nproc = cpus().length;
  try {
    nproc = Number(execSync("nproc", { encoding: "utf8" }).trim()) || nproc;
  } catch {}
  return {
    nproc,
    cpu,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

// The servers under test run from compiled dist/, as `npm start` does: build it first.
execSync("npx tsc -p tsconfig.build.json && npx tsc -p server/tsconfig.build.json", { stdio: "inherit" });

if (AGAINST !== undefined) {
  const wanted = only.length > 0 ? only : AGAINST_ROWS;
  const chosen = jobs().filter((job) => job.program === "./http.ts" && wanted.includes(job.id));
  const unknown = wanted.filter((id) => !chosen.some((job) => job.id === id));
  if (unknown.length > 0) {
    console.error(`bench: --against compares HTTP rows only (${unknown.join(", ")} is not one)`);
    process.exit(2);
  }
  const { root, sha } = prepareWorktree(AGAINST);
  try {
    const measured = await compareAgainst(chosen, PAIRS, root, async (job, side) => {
      const [row] = await runJob(job as Job, side === undefined ? {} : { BENCH_OURS_ROOT: side });
      return row as Row;
    });
    console.log(`\n${againstTable(measured, sha)}\n`);
    console.log(`${PAIRS} pairs a row against ${sha} on ${machine().cpu}, Node ${process.version}.`);
    if (OUT !== undefined && outIndex !== -1) {
      writeFileSync(
        OUT,
        `${JSON.stringify({ date: new Date().toISOString(), against: sha, rows: measured }, null, 2)}\n`,
      );
    }
  } finally {
    if (!args.includes("--keep-worktree")) removeWorktree(root);
  }
  process.exit(0);
}

const started = Date.now();
const rows: Row[] = [];
for (const job of jobs()) {
  const t0 = Date.now();
  const named = job.args.filter((a) => !a.startsWith("--") && a !== job.id);
  const what = named.length === 0 ? "" : ` ${named.join(" ")}`;
  process.stderr.write(`bench: ${job.id}${what} … `);
  const got = await runJob(job);
  rows.push(...got);
  process.stderr.write(`${((Date.now() - t0) / 1000).toFixed(1)} s (${got.map((r) => r.verdict).join(", ")})\n`);
}
const seconds = (Date.now() - started) / 1000;
const host = machine();

console.log(`\n${markdownTable(rows)}\n`);
console.log(
  `${QUICK ? "Quick run (numbers mean nothing)" : "Run"} on ${host.nproc} × ${host.cpu}, ${host.memoryGiB} GiB, ` +
    `Node ${host.node}, ${host.platform}; ${seconds.toFixed(0)} s.`,
);
const count = (v: Row["verdict"]) => rows.filter((r) => r.verdict === v).length;
console.log(
  `${count("pass")} pass, ${count("miss")} miss, ${count("info")} info, ${count("skipped")} skipped, ${count("error")} error`,
);
const results: Results = {
  date: new Date().toISOString(),
  quick: QUICK,
  seconds: Math.round(seconds),
  machine: host,
  rows,
};
if (OUT !== undefined) {
  const path = fileURLToPath(new URL(OUT, new URL(`file://${process.cwd()}/bench/`)));
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`wrote ${path}`);
}
if (README) writeReadme(results, process.cwd());
process.exitCode = count("error") > 0 || (STRICT && count("miss") > 0) ? 1 : 0;
