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
  /** Our number (req/s, µs a page, ops/s, bytes a pet), or null when skipped or failed. */
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
