/**
 * Timing helpers for the in-process scenarios, and the flags every bench program shares.
 * Every loop is bounded by a deadline.
 */
import { performance } from "node:perf_hooks";
import { Unavailable } from "./backends.ts";
import type { Row, Target } from "./report.ts";
import { unavailable } from "./report.ts";

/** True when the program runs in `--quick` mode (about a second per scenario, proves it still works). */
export const QUICK = process.argv.includes("--quick");

/** Runs `step` one call after another for `ms`; returns the calls and the time they took (µs per call). */
export async function sequential(step: (i: number) => Promise<unknown>, ms: number): Promise<number> {
  const start = performance.now();
  const deadline = start + ms;
  let calls = 0;
  do {
    await step(calls);
    calls++;
  } while (performance.now() < deadline);
  return ((performance.now() - start) * 1000) / calls;
}

/** Runs `step` with `inFlight` calls at a time for `ms`; returns calls a second. */
export async function concurrent(step: (i: number) => Promise<unknown>, inFlight: number, ms: number): Promise<number> {
  const start = performance.now();
  const deadline = start + ms;
  let calls = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      await step(calls++);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return (calls / (performance.now() - start)) * 1000;
}

/**
 * Runs `a` and `b` `rounds` times each, in pairs ordered A B, B A, A B, …: a steady drift of the
 * machine favours neither side, and both rounds of a pair see about the same moment. Returns each
 * side's results, pair by pair.
 */
export async function alternating<T>(
  rounds: number,
  a: () => Promise<T>,
  b: () => Promise<T>,
): Promise<[a: T[], b: T[]]> {
  const as: T[] = [];
  const bs: T[] = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      as.push(await a());
      bs.push(await b());
    } else {
      bs.push(await b());
      as.push(await a());
    }
  }
  return [as, bs];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Spread of a list as "min–max". */
export function spread(values: readonly number[], digits = 2): string {
  return `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
}

/**
 * The rows to report when a backend is not reachable: "skipped", unless CI=true (where every
 * service must be there), in which case the error is thrown on.
 */
export function skipped(
  error: unknown,
  rows: { id: string; scenario: string; unit: string; target: Target | null }[],
): Row[] {
  if (!(error instanceof Unavailable) || process.env.CI === "true") throw error;
  console.error(`SKIPPED: ${error.message}`);
  return rows.map((r) => unavailable(r.id, r.scenario, r.unit, r.target, "skipped", error.message));
}
