/**
 * The bench's rows, how each is judged against its target, and the table printed at the end
 * (also used for the README's "Performance" section).
 */

export type Verdict = "pass" | "miss" | "info" | "skipped" | "error";

/** A target: the measured value (or ratio) must be at least / at most `value`. */
export interface Target {
  on: "ratio" | "ours";
  op: ">=" | "<=";
  value: number;
}

/** One line of the table and of bench/results.json. */
export interface Row {
  /** Scenario id: H1-H3, S1, S2, M1 (issue 6), F1-F3 (issue 16), T1 (issue 18), and later issues' rows. */
  id: string;
  /** What was measured, e.g. "memory, no filter". */
  scenario: string;
  /** Our number (req/s, µs per page, ops/s, bytes per pet), or null when skipped or failed. */
  ours: number | null;
  /** The baseline's number in the same run, or null when the scenario has none. */
  baseline: number | null;
  unit: string;
  /** ours / baseline, when there is a baseline. */
  ratio: number | null;
  target: Target | null;
  verdict: Verdict;
  /** Anything a reader needs to interpret the row (reduced sizes, spreads, skip reasons). */
  note?: string;
}

/** Builds a row and judges it. */
export function row(fields: Omit<Row, "ratio" | "verdict"> & { ratio?: number | null }): Row {
  const ratio =
    fields.ratio !== undefined
      ? fields.ratio
      : fields.ours !== null && fields.baseline !== null && fields.baseline > 0
        ? fields.ours / fields.baseline
        : null;
  return { ...fields, ratio, verdict: judge(fields.target, fields.ours, ratio) };
}

function judge(target: Target | null, ours: number | null, ratio: number | null): Verdict {
  if (target === null) return "info";
  const value = target.on === "ratio" ? ratio : ours;
  if (value === null || !Number.isFinite(value)) return "error";
  return (target.op === ">=" ? value >= target.value : value <= target.value) ? "pass" : "miss";
}

/** A row for a scenario that could not run here (e.g. no Redis), or crashed. */
export function unavailable(
  id: string,
  scenario: string,
  unit: string,
  target: Target | null,
  verdict: "skipped" | "error",
  note: string,
): Row {
  return { id, scenario, ours: null, baseline: null, unit, ratio: null, target, verdict, note };
}

function formatNumber(n: number | null): string {
  if (n === null) return "—";
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString("en-US");
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

function formatTarget(target: Target | null, unit: string): string {
  if (target === null) return "—";
  const value = target.on === "ratio" ? String(target.value) : `${target.value.toLocaleString("en-US")} ${unit}`;
  return `${target.on === "ratio" ? "ratio " : ""}${target.op === ">=" ? "≥" : "≤"} ${value}`;
}

/** The rows as a Markdown table (scenario, ours, baseline, ratio, target, verdict, note). */
export function markdownTable(rows: readonly Row[]): string {
  const lines = [
    "| id | scenario | ours | baseline | unit | ratio | target | result | note |",
    "|---|---|--:|--:|---|--:|---|---|---|",
  ];
  for (const r of rows) {
    const ratio = r.ratio === null ? "—" : r.ratio.toFixed(2);
    const cells = [
      r.id,
      r.scenario,
      formatNumber(r.ours),
      formatNumber(r.baseline),
      r.unit,
      ratio,
      formatTarget(r.target, r.unit),
      r.verdict,
      (r.note ?? "").replace(/\|/g, "\\|"),
    ];
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

/** Short names of the rows, for the README's summary (others: their scenario up to its first comma). */
const LABELS: Record<string, string> = {
  H1: "page, standalone server",
  H2: "page, hapi plugin",
  H3: "create, standalone server",
  F1: "page, fetch on Bun",
  F2: "page, Fastify plugin",
  F3: "page, fetch on Deno",
  O1: "page, metrics on vs off",
  B1: "page, Redis",
  B2: "page, Postgres",
  B3: "page, SQLite",
  B4: "create, Redis/Postgres/SQLite",
  B5: "page, SQLite, vs one range read",
  O2: "page, CORS Origin vs none",
  O3: "page, OpenTelemetry API vs none",
  O4: "page, every request traced vs not",
  R1: "page, Redis, rate limit on vs off",
  R2: "page, Postgres, rate limit on vs off",
  C1: "page, Redis Cluster vs one Redis",
  C2: "create, Redis Cluster vs one Redis",
  C3: "create, replicated vs async",
  S1: "page at 1,000,000 vs 1,000 pets",
  S2: "creates in process",
  W1: "2 workers vs 1",
  K1: "Worker bundle",
  K2: "client bundle",
  M1: "heap a pet",
  T1: "test server ready",
  I1: "create with a key vs without",
  I2: "the same, on each shared backend",
  I3: "replay vs create",
  M2: "heap an idempotency key",
};

const WORST: readonly Verdict[] = ["error", "miss", "skipped", "pass", "info"];

/** One row over several full runs in a row: the range of its judged value and how many runs met the target. */
export interface Spread {
  id: string;
  scenario: string;
  runs: number;
  low: number;
  high: number;
  /** Runs whose verdict was "pass". */
  held: number;
}

/** The value a row is judged on (its ratio, or our number), or null. */
function judgedValue(r: Row): number | null {
  const onRatio = r.target?.on === "ratio" || (r.target === null && r.ratio !== null);
  const value = onRatio ? r.ratio : r.ours;
  return value !== null && Number.isFinite(value) ? value : null;
}

/** Each row of the last run over `runs` (the last one included, in order): its range and how often it held. */
export function spreadOf(runs: readonly Results[]): Spread[] {
  const last = runs[runs.length - 1];
  if (last === undefined) return [];
  return last.rows.flatMap((r) => {
    const same = runs.map((run) => run.rows.find((o) => o.id === r.id && o.scenario === r.scenario));
    const values = same.map((o) => (o === undefined ? null : judgedValue(o))).filter((v): v is number => v !== null);
    if (values.length === 0) return [];
    const held = same.filter((o) => o?.verdict === "pass").length;
    return [
      { id: r.id, scenario: r.scenario, runs: runs.length, low: Math.min(...values), high: Math.max(...values), held },
    ];
  });
}

/** One id's rows in a cell: the value (or range of values) judged, its target, the worst verdict. */
function summaryCell(rows: readonly Row[], spread: readonly Spread[] = []): string {
  const judged = rows.filter((r) => r.target !== null);
  const verdict = WORST.find((v) => rows.some((r) => r.verdict === v)) ?? "info";
  const shown = judged.length > 0 ? judged : rows.slice(0, 1);
  const first = shown[0] as Row;
  const onRatio = first.target?.on === "ratio" || (first.target === null && first.ratio !== null);
  const values = shown
    .map((r) => (onRatio ? r.ratio : r.ours))
    .filter((v): v is number => v !== null && Number.isFinite(v));
  if (values.length === 0) return verdict;
  const format = (n: number) => (onRatio ? n.toFixed(2) : formatNumber(n));
  const low = Math.min(...values);
  const high = Math.max(...values);
  const value = low === high ? format(low) : `${format(low)}–${format(high)}`;
  const unit = onRatio ? "" : ` ${first.unit}`;
  const target = first.target === null ? "" : ` (${formatTarget(first.target, first.unit).replace(/^ratio /, "")})`;
  const over = spread.filter((o) => shown.some((r) => r.id === o.id && r.scenario === o.scenario));
  if (over.length === 0) return `${value}${unit}${target} ${verdict}`;
  const runs = Math.max(...over.map((o) => o.runs));
  const lowest = format(Math.min(...over.map((o) => o.low)));
  const highest = format(Math.max(...over.map((o) => o.high)));
  const range = lowest === highest ? lowest : `${lowest}–${highest}`;
  const held = first.target === null ? "" : `, held ${Math.min(...over.map((o) => o.held))}`;
  return `${value}${unit}${target} ${verdict}; ${runs} runs ${range}${held}`;
}

/**
 * The README's summary: one cell an id (the range of its rows' values, the target, the worst
 * verdict), three ids a line. The full table goes to docs/performance.md.
 */
export function summaryTable(rows: readonly Row[], spread: readonly Spread[] = []): string {
  const ids: string[] = [];
  for (const r of rows) if (!ids.includes(r.id)) ids.push(r.id);
  const cells = ids.map((id) => {
    const mine = rows.filter((r) => r.id === id);
    const label = LABELS[id] ?? (mine[0] as Row).scenario.split(",")[0];
    return `**${id}** ${label} | ${summaryCell(mine, spread)}`;
  });
  const lines = ["| row | result | row | result | row | result |", "|---|---|---|---|---|---|"];
  for (let i = 0; i < cells.length; i += 3) {
    const line = cells.slice(i, i + 3);
    while (line.length < 3) line.push(" | ");
    lines.push(`| ${line.join(" | ")} |`);
  }
  return lines.join("\n");
}

/** The machine a run was measured on. */
export interface Machine {
  nproc: number;
  cpu: string;
  memoryGiB: number;
  node: string;
  platform: string;
}

/** What a run writes to bench/results.json, and what the README and docs/performance.md are made from. */
export interface Results {
  /** When the run ended (ISO 8601). */
  date: string;
  quick: boolean;
  /** The whole run, in seconds. */
  seconds: number;
  machine: Machine;
  rows: Row[];
  /** Each row over this run and the full runs just before it (bench/spread.ts adds it). */
  spread?: Spread[];
}

function measured({ date, seconds, machine: m }: Results): string {
  return (
    `Measured ${date.slice(0, 10)} on ${m.nproc} × ${m.cpu} (${m.memoryGiB} GiB), Node ${m.node}, ` +
    `${m.platform}; the whole run took ${seconds.toFixed(0)} s.`
  );
}

/** What stands between the README's bench:results markers (the start marker included, not the end one). */
export function readmeBlock(results: Results): string {
  return (
    `<!-- bench:results:start -->\n${summaryTable(results.rows, results.spread)}\n\n${measured(results)} ` +
    "Every row: [docs/performance.md](docs/performance.md).\n"
  );
}

/** docs/performance.md: every row of the run. */
export function performancePage(results: Results): string {
  return (
    "# Performance: every row of the last full bench run\n\n" +
    "Written by `npm run bench -- --readme` (the README shows a summary of it). Each ratio is ours against a " +
    "baseline measured in the same run, alternating; the note says how. What each row measures: " +
    `[bench/README.md](../bench/README.md).\n\n${markdownTable(results.rows)}\n\n${measured(results)}\n` +
    spreadSection(results.spread)
  );
}

/** docs/performance.md's table of each row over the runs in a row, when the run has them. */
function spreadSection(spread: readonly Spread[] | undefined): string {
  if (spread === undefined || spread.length === 0) return "";
  const runs = Math.max(...spread.map((o) => o.runs));
  const lines = [
    `\n## Over ${runs} full runs in a row\n`,
    `This run and the ${runs - 1} before it, on the same machine and code: the lowest and highest value judged, and in how many runs the row met its target.\n`,
    "| id | scenario | low | high | met its target |",
    "|---|---|--:|--:|---|",
    ...spread.map((o) => {
      const format = (n: number) => (Math.abs(n) < 10 ? n.toFixed(2) : formatNumber(n));
      return `| ${o.id} | ${o.scenario.replace(/\|/g, "\\|")} | ${format(o.low)} | ${format(o.high)} | ${o.held} of ${o.runs} |`;
    }),
  ];
  return `${lines.join("\n")}\n`;
}
