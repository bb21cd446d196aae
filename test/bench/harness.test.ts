/**
 * The bench's own machinery (issue 6): how rounds alternate, how a row is judged against its
 * target, the table, and what `bench/run.ts` writes. Speed is never asserted here: only that the
 * programs measure fairly and report what they measured.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { againstTable, compareAgainst } from "../../bench/against.ts";
import { openBench } from "../../bench/backends.ts";
import { callgrindMissing } from "../../bench/callgrind.ts";
import { sqliteConnection } from "../../bench/drivers.ts";
import { benchPet, fill } from "../../bench/fill.ts";
import { alternating, median, spread } from "../../bench/measure.ts";
import {
  markdownTable,
  performancePage,
  type Results,
  type Row,
  row,
  spreadOf,
  summaryTable,
  unavailable,
} from "../../bench/report.ts";
import { ROOT, startProgram } from "../support/program.ts";

test("bench: alternating() runs the pairs A B, B A, A B, … and hands back each side's results in round order", async () => {
  const order: string[] = [];
  let n = 0;
  const [as, bs] = await alternating(
    4,
    async () => {
      order.push("A");
      return `a${n++}`;
    },
    async () => {
      order.push("B");
      return `b${n++}`;
    },
  );
  assert.equal(order.join(""), "ABBAABBA");
  assert.equal(as, ["a0", "a3", "a4", "a7"]);
  assert.equal(bs, ["b1", "b2", "b5", "b6"]);
});

test("bench: median() of an odd and an even list, whatever their order; spread() is min–max", () => {
  assert.is(median([3, 1, 2]), 2);
  assert.is(median([4, 1, 3, 2]), 2.5);
  assert.is(spread([0.91, 0.55, 1.18]), "0.55–1.18");
});

test("bench: a ratio row passes at its target and misses just past it, for ≥ and ≤ targets", () => {
  const at = (ratio: number, op: ">=" | "<=", value: number) =>
    row({ id: "X", scenario: "s", ours: 1, baseline: 1, unit: "req/s", ratio, target: { on: "ratio", op, value } })
      .verdict;
  assert.is(at(0.8, ">=", 0.8), "pass");
  assert.is(at(0.7999, ">=", 0.8), "miss");
  assert.is(at(1.5, "<=", 1.5), "pass");
  assert.is(at(1.5001, "<=", 1.5), "miss");
});

test("bench: a row's ratio is ours / baseline unless given; no target is info; no number is an error", () => {
  const measured = row({ id: "S1", scenario: "s", ours: 300, baseline: 200, unit: "µs/page", target: null });
  assert.is(measured.ratio, 1.5);
  assert.is(measured.verdict, "info");
  const floor = { on: "ours" as const, op: ">=" as const, value: 100_000 };
  assert.is(
    row({ id: "S2", scenario: "s", ours: 99_999, baseline: null, unit: "ops/s", target: floor }).verdict,
    "miss",
  );
  assert.is(
    row({ id: "S2", scenario: "s", ours: 100_000, baseline: null, unit: "ops/s", target: floor }).verdict,
    "pass",
  );
  const noRatio = row({
    id: "H1",
    scenario: "s",
    ours: 5,
    baseline: 0,
    unit: "req/s",
    target: { ...floor, on: "ratio" },
  });
  assert.is(noRatio.ratio, null);
  assert.is(noRatio.verdict, "error");
});

test("bench: the table shows every row with its ratio and verdict, — where there is no number, and escapes | in notes", () => {
  const rows: Row[] = [
    row({
      id: "H3",
      scenario: "POST",
      ours: 43_123.4,
      baseline: 50_070,
      unit: "req/s",
      ratio: 0.8612,
      target: { on: "ratio", op: ">=", value: 0.8 },
      note: "a | b",
    }),
    unavailable("S1", "redis, listPets", "µs/page", { on: "ratio", op: "<=", value: 1.5 }, "skipped", "no Redis"),
  ];
  const lines = markdownTable(rows).split("\n");
  assert.is(lines.length, 4);
  assert.is(lines[2], "| H3 | POST | 43,123 | 50,070 | req/s | 0.86 | ratio ≥ 0.8 | pass | a \\| b |");
  assert.is(lines[3], "| S1 | redis, listPets | — | — | µs/page | — | ratio ≤ 1.5 | skipped | no Redis |");
});

test("summaryTable: one cell an id, three a line: the range of its judged values, the target, the worst verdict", () => {
  const ratio = (value: number) => ({ on: "ratio", op: ">=", value }) as const;
  const rows: Row[] = [
    row({ id: "H1", scenario: "GET", ours: 90, baseline: 100, unit: "req/s", target: ratio(0.85) }),
    row({ id: "B4", scenario: "POST, redis", ours: 95, baseline: 100, unit: "req/s", target: ratio(0.8) }),
    row({ id: "B4", scenario: "POST, sqlite", ours: 70, baseline: 100, unit: "req/s", target: ratio(0.8) }),
    row({
      id: "S2",
      scenario: "memory",
      ours: 500_000,
      baseline: null,
      unit: "ops/s",
      target: { on: "ours", op: ">=", value: 100_000 },
    }),
    row({ id: "S2", scenario: "sqlite", ours: 7_000, baseline: null, unit: "ops/s", target: null }),
    row({ id: "Z9", scenario: "something new, in detail", ours: 3, baseline: null, unit: "ms", target: null }),
  ];
  const lines = summaryTable(rows).split("\n");
  assert.is(lines.length, 4);
  assert.is(
    lines[2],
    "| **H1** page, standalone server | 0.90 (≥ 0.85) pass | **B4** create, Redis/Postgres/SQLite | 0.70–0.95 (≥ 0.8) miss | **S2** creates in process | 500,000 ops/s (≥ 100,000 ops/s) pass |",
  );
  assert.is(lines[3], "| **Z9** something new | 3.00 ms info |  |  |  |  |");
});

test("spreadOf: each row of the last run over the runs in a row (its range, how many held); the summary and the page show it", () => {
  const ratio = (value: number) => ({ on: "ratio", op: ">=", value }) as const;
  const run = (h1: number, redis: number, sqlite: number): Results => ({
    date: "2026-11-27T08:00:00.000Z",
    quick: false,
    seconds: 700,
    machine: { nproc: 2, cpu: "EPYC", memoryGiB: 24, node: "v24.21.0", platform: "linux x64" },
    rows: [
      row({ id: "H1", scenario: "GET", ours: h1, baseline: 100, unit: "req/s", target: ratio(0.85) }),
      row({ id: "B4", scenario: "POST, redis", ours: redis, baseline: 100, unit: "req/s", target: ratio(0.8) }),
      row({ id: "B4", scenario: "POST, sqlite", ours: sqlite, baseline: 100, unit: "req/s", target: ratio(0.8) }),
    ],
  });
  const runs = [run(90, 95, 85), run(84, 99, 90), run(91, 97, 120)];
  const spread = spreadOf(runs);
  assert.equal(
    spread.map((o) => [o.id, o.scenario, o.runs, o.low, o.high, o.held]),
    [
      ["H1", "GET", 3, 0.84, 0.91, 2],
      ["B4", "POST, redis", 3, 0.95, 0.99, 3],
      ["B4", "POST, sqlite", 3, 0.85, 1.2, 3],
    ],
  );
  const [, , line] = summaryTable((runs[2] as Results).rows, spread).split("\n");
  assert.is(
    line,
    "| **H1** page, standalone server | 0.91 (≥ 0.85) pass; 3 runs 0.84–0.91, held 2 | **B4** create, Redis/Postgres/SQLite | 0.97–1.20 (≥ 0.8) pass; 3 runs 0.85–1.20, held 3 |  |  |",
  );
  const page = performancePage({ ...(runs[2] as Results), spread });
  assert.match(page, "## Over 3 full runs in a row");
  assert.match(page, "| H1 | GET | 0.84 | 0.91 | 2 of 3 |");
});

/** Runs bench/run.ts with these arguments, as `npm run bench -- …` does, to its end. */
async function bench(args: string[], ms = 120_000) {
  const program = startProgram(["bench/run.ts", ...args]);
  try {
    return { status: await program.exited(ms), stdout: program.stdout(), stderr: program.stderr() };
  } finally {
    await program.kill();
  }
}

test("bench: run.ts measures the scenarios asked for, prints the table and the tally, and --out writes the rows as JSON", async () => {
  const dir = mkdtempSync(join(tmpdir(), "petstore-bench-"));
  try {
    const out = join(dir, "results.json");
    const run = await bench(["--quick", "--out", out, "M1"]);
    assert.is(run.status, 0, run.stderr);
    assert.match(
      run.stdout,
      /^\| M1 \| memory, heap a stored pet \| [0-9.]+ \| — \| bytes\/pet \| — \| ≤ 400 bytes\/pet \| (pass|miss) \|/m,
    );
    assert.match(run.stdout, /^[01] pass, [01] miss, 0 info, 0 skipped, 0 error$/m);
    const results = JSON.parse(readFileSync(out, "utf8"));
    assert.is(results.quick, true);
    assert.is(results.machine.node, process.version);
    assert.is(results.rows.length, 1);
    assert.is(results.rows[0].id, "M1");
    assert.ok(results.rows[0].ours > 0, "the bytes a pet were measured");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("bench: T1 measures how long startTestServer() takes to be ready and judges it against 100 ms", async () => {
  const dir = mkdtempSync(join(tmpdir(), "petstore-bench-"));
  try {
    const out = join(dir, "results.json");
    const run = await bench(["--quick", "--out", out, "T1"]);
    assert.is(run.status, 0, run.stderr);
    assert.match(
      run.stdout,
      /^\| T1 \| startTestServer\(\) ready, first start \| [0-9.,]+ \| — \| ms \| — \| ≤ 100 ms \| (pass|miss) \|/m,
    );
    const results = JSON.parse(readFileSync(out, "utf8"));
    assert.is(results.rows[0].id, "T1");
    assert.ok(results.rows[0].ours > 0, "the milliseconds were measured");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("bench: --instructions counts both servers' instructions a request under callgrind, writing no results file of its own; --functions says where they go", async () => {
  const missing = callgrindMissing();
  if (missing !== undefined) {
    if (process.env.CI === "true") assert.unreachable(`CI must count instructions: ${missing}`);
    console.warn(`SKIPPED: bench --instructions: ${missing}`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "petstore-bench-"));
  try {
    const out = join(dir, "results.json");
    const run = await bench(["--quick", "--instructions", "--functions", "--out", out, "H1"], 600_000); // Node under valgrind starts slowly
    assert.is(run.status, 0, run.stderr);
    assert.match(
      run.stdout,
      /^\| H1 \| .* \| instructions a request \| [0-9.]+ \| ratio ≥ 0\.85 \| (pass|miss) \| callgrind: /m,
    );
    const [row] = JSON.parse(readFileSync(out, "utf8")).rows;
    // A request through Node's HTTP server alone is tens of thousands of instructions.
    assert.ok(row.ours > 20_000 && row.baseline > 20_000, JSON.stringify(row));
    assert.ok(Math.abs(row.ratio - row.baseline / row.ours) < 0.01, "the ratio is the baseline's count over ours");
    // --functions: a table on stderr, JavaScript named from V8's perf map (our handler among it).
    assert.match(run.stderr, /H1: instructions a request by function \(ours [0-9]+, baseline [0-9]+/);
    assert.match(run.stderr, /^ +-?[0-9]+ +[0-9]+ +[0-9]+ {2}JS .*dist\/(lib|chunks)\//m); // the bundles
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("bench: --readme with --quick or scenario ids is refused before anything runs, and the README is left as it was", async () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  for (const args of [
    ["--readme", "--quick"],
    ["--readme", "M1"],
    ["--readme", "--instructions"],
  ]) {
    const run = await bench(args);
    assert.is(run.status, 2, `${args.join(" ")}: ${run.stderr}`);
    assert.match(run.stderr, /--readme takes a full run of every scenario/);
    assert.not.match(run.stderr, /bench: M1/, "nothing was measured");
  }
  assert.is(readFileSync(join(ROOT, "README.md"), "utf8"), readme);
});

test("bench --against: each row runs in pairs, alternating which side goes first, and a pair's ratio of ratios is ours over theirs", async () => {
  const order: string[] = [];
  const ratios: Record<string, number[]> = { ours: [1.0, 0.9, 0.8], theirs: [0.5, 1.0, 0.8] };
  const rows = await compareAgainst(
    [{ id: "P1", scenario: "a page", program: "./http.ts", args: ["P1"], timeoutMs: 1 }],
    3,
    "/elsewhere",
    async (_job, root) => {
      const side = root === undefined ? "ours" : "theirs";
      order.push(side);
      const ratio = ratios[side]?.shift() as number;
      return row({ id: "P1", scenario: "a page", ours: ratio, baseline: 1, unit: "req/s", target: null });
    },
  );
  assert.equal(order, ["ours", "theirs", "theirs", "ours", "ours", "theirs"]);
  assert.equal(rows[0]?.ours, [1.0, 0.9, 0.8]);
  assert.equal(rows[0]?.theirs, [0.5, 1.0, 0.8]);
  assert.equal(rows[0]?.ratios, [2, 0.9, 1]);
  assert.match(
    againstTable(rows, "3fcb4f5e5e17"),
    /^\| P1 \| 0\.900 \(0\.800–1\.000\) \| 0\.800 \(0\.500–1\.000\) \| 1\.000 \(0\.900–2\.000\) \(3\) \|$/m,
  );
});

test("bench --against HEAD builds it in a worktree, alternates the rows with it, prints the table and removes the worktree", async () => {
  const worktrees = () => execFileSync("git", ["worktree", "list"], { cwd: ROOT, encoding: "utf8" });
  const before = worktrees();
  const run = await bench(["--quick", "--against", "HEAD", "--pairs", "1", "H1"], 600_000);
  assert.is(run.status, 0, run.stderr);
  assert.match(
    run.stdout,
    /^\| row \| this checkout \/ baseline \| [0-9a-f]{7} \/ baseline \| this \/ [0-9a-f]{7} \(pairs\) \|$/m,
  );
  assert.match(
    run.stdout,
    /^\| H1 \| [0-9.]+ \([0-9.]+–[0-9.]+\) \| [0-9.]+ \([0-9.]+–[0-9.]+\) \| [0-9.]+ \([0-9.]+–[0-9.]+\) \(1\) \|$/m,
  );
  assert.match(run.stderr, /H1 pair 1, ours [0-9.]+/);
  assert.match(run.stderr, /H1 pair 1, theirs [0-9.]+/);
  assert.is(worktrees(), before, "the worktree is gone again");
});

test("bench --against refuses what it cannot compare before anything runs", async () => {
  for (const [args, message] of [
    [["--against", "HEAD", "M1"], /compares HTTP rows only \(M1/],
    [["--against", "HEAD", "--instructions", "H1"], /--against takes a commit/],
    [["--against", "HEAD", "--pairs", "0", "H1"], /--against takes a commit/],
    [["--against", "no-such-commit-here", "H1"], /no-such-commit-here|unknown revision|Needed a single revision/],
  ] as const) {
    const run = await bench([...args]);
    assert.is.not(run.status, 0, `${args.join(" ")}: ${run.stdout}`);
    assert.match(run.stderr, message, args.join(" "));
    assert.not.match(run.stderr, /pair 1/, "nothing was measured");
  }
});

test("bench: the SQLite fill writes the very rows create() writes (values, index entries with their served texts, sequence)", async () => {
  const rowsOf = async (path: string, table: string) => {
    const db = await sqliteConnection(path);
    try {
      return {
        values: await db.query(`SELECT key, value FROM ${table}_values ORDER BY key`),
        index: await db.query(`SELECT id, status, pet FROM ${table}_index ORDER BY id`),
        sequence: await db.query(`SELECT value FROM ${table}_seq`),
      };
    } finally {
      await db.close();
    }
  };
  const filled = await openBench("sqlite", "fill");
  const created = await openBench("sqlite", "made");
  try {
    await fill(filled, 3);
    for (let id = 1; id <= 3; id++) {
      const { name, categoryId, status } = benchPet(id);
      await created.storage.create({ name, categoryId, status });
    }
    const location = (b: typeof filled) => b.location as { path: string; table: string };
    const made = await rowsOf(location(created).path, location(created).table);
    assert.is(made.index.length, 3);
    assert.equal(await rowsOf(location(filled).path, location(filled).table), made);
  } finally {
    await filled.drop();
    await created.drop();
  }
});

test.run();
