/**
 * `npm run bench -- --against <commit> [ROW …] [--pairs N]`: this checkout's server against
 * another commit's on the same rows, the same machine and the same minutes. The commit is built in
 * a worktree of its own (its node_modules shared when its lockfile is this one's, else installed);
 * then each row runs in pairs, this checkout's run and the commit's alternating which goes first
 * (A B, B A, …), each against the same baseline (this checkout's). A pair's ratio of ratios is this
 * checkout's ratio over the commit's: the machine's drift cancels twice, once in each ratio and once
 * in the pair. Printed per row: both ratios and the ratio of ratios, each as median and range.
 */
import { execFileSync, execSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median, spread } from "./measure.ts";
import type { Row } from "./report.ts";

/** A row to compare: its id, and the program and arguments that measure it (bench/run.ts's job). */
export interface AgainstJob {
  id: string;
  scenario: string;
  program: string;
  args: string[];
  timeoutMs: number;
}

/** What the comparison found for one row. */
export interface AgainstRow {
  id: string;
  scenario: string;
  /** This checkout's ratio to the baseline in each pair. */
  ours: number[];
  /** The other commit's, in the same pairs. */
  theirs: number[];
  /** ours[i] / theirs[i]. */
  ratios: number[];
}

/** The rows `--against` runs when none are named: the hot paths (a page in memory and on each engine, a create). */
export const AGAINST_ROWS = ["H1", "H3", "P1", "P2", "P3"];

const git = (args: string[], cwd = process.cwd()) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

/**
 * `root`'s node_modules made of links to `from`'s packages, but for the workspace's own packages
 * (petstore-lib, petstore-server), which are the worktree's.
 */
function shareModules(from: string, root: string): void {
  const own = new Map([
    ["petstore-lib", ".."],
    ["petstore-server", "../server"],
  ]);
  mkdirSync(join(root, "node_modules"));
  for (const name of readdirSync(join(from, "node_modules"))) {
    symlinkSync(own.get(name) ?? join(from, "node_modules", name), join(root, "node_modules", name));
  }
}

/**
 * A worktree of `commit` with its dist/ built, in the system's temporary folder (one per commit,
 * reused while it is there): its path and full hash.
 */
export function prepareWorktree(commit: string): { root: string; sha: string } {
  const sha = git(["rev-parse", "--verify", `${commit}^{commit}`]);
  const root = join(tmpdir(), `petstore-bench-${sha.slice(0, 12)}`);
  if (!existsSync(join(root, ".git"))) {
    process.stderr.write(`bench --against: a worktree of ${sha.slice(0, 12)} in ${root}\n`);
    git(["worktree", "add", "--detach", "--force", root, sha]);
  }
  if (!existsSync(join(root, "node_modules"))) {
    const lock = (dir: string) => readFileSync(join(dir, "package-lock.json"), "utf8");
    if (lock(root) === lock(process.cwd())) shareModules(process.cwd(), root);
    else {
      process.stderr.write("bench --against: its package-lock.json differs: npm ci there (a few minutes)\n");
      execSync("npm ci --no-audit --no-fund", { cwd: root, stdio: "inherit" });
    }
  }
  execSync("npx tsc -p tsconfig.build.json", { cwd: root, stdio: "inherit" });
  // From 1.4 on, petstore-server builds apart (server/dist).
  if (existsSync(join(root, "server", "tsconfig.build.json"))) {
    execSync("npx tsc -p server/tsconfig.build.json", { cwd: root, stdio: "inherit" });
  }
  return { root, sha };
}

/** Removes the worktree made by `prepareWorktree`. */
export function removeWorktree(root: string): void {
  try {
    git(["worktree", "remove", "--force", root]);
  } catch {}
}

/**
 * Runs every job `pairs` times on each side, alternating which side goes first, and collects each
 * pair's ratios. `run(job, root)` measures a job with our server from `root` (undefined: this
 * checkout) and resolves its row.
 */
export async function compareAgainst(
  jobs: readonly AgainstJob[],
  pairs: number,
  root: string,
  run: (job: AgainstJob, root: string | undefined) => Promise<Row>,
): Promise<AgainstRow[]> {
  const results: AgainstRow[] = [];
  for (const job of jobs) {
    const result: AgainstRow = { id: job.id, scenario: job.scenario, ours: [], theirs: [], ratios: [] };
    for (let pair = 0; pair < pairs; pair++) {
      const order: (string | undefined)[] = pair % 2 === 0 ? [undefined, root] : [root, undefined];
      const measured = new Map<string | undefined, number>();
      for (const side of order) {
        const row = await run(job, side);
        if (row.ratio === null) throw new Error(`${job.id}: no ratio (${row.verdict}: ${row.note ?? ""})`);
        measured.set(side, row.ratio);
        process.stderr.write(
          `bench --against: ${job.id} pair ${pair + 1}, ${side ? "theirs" : "ours"} ${row.ratio.toFixed(3)}\n`,
        );
      }
      const ours = measured.get(undefined) as number;
      const theirs = measured.get(root) as number;
      result.ours.push(ours);
      result.theirs.push(theirs);
      result.ratios.push(ours / theirs);
    }
    results.push(result);
  }
  return results;
}

/** The comparison as a Markdown table. */
export function againstTable(rows: readonly AgainstRow[], sha: string): string {
  const cell = (values: number[]) => `${median(values).toFixed(3)} (${spread(values, 3)})`;
  const lines = [
    `| row | this checkout / baseline | ${sha.slice(0, 7)} / baseline | this / ${sha.slice(0, 7)} (pairs) |`,
    "|---|---|---|---|",
    ...rows.map((r) => `| ${r.id} | ${cell(r.ours)} | ${cell(r.theirs)} | ${cell(r.ratios)} (${r.ratios.length}) |`),
  ];
  return lines.join("\n");
}
