/**
 * Instructions a request, counted by valgrind's callgrind (`npm run bench -- --instructions H1`):
 * a count, not a time, so it is the same whatever else the machine does. A server runs under
 * callgrind with counting off (a few times slower than without valgrind), is
 * warmed up, then only the measured requests are counted: `callgrind_control` turns counting on,
 * zeroes it, and dumps it after them. The kernel's share (socket reads and writes) is not counted,
 * and the same for both sides; what differs between a server and its baseline is their own code.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Why callgrind cannot count here, or undefined when it can. */
export function callgrindMissing(): string | undefined {
  for (const tool of ["valgrind", "callgrind_control"]) {
    try {
      execFileSync(tool, ["--version"], { stdio: "ignore" });
    } catch {
      return `${tool} is not installed (Debian: apt-get install valgrind)`;
    }
  }
  return undefined;
}

/** A folder for the counts, and an executable that runs this Node under callgrind (fork's execPath). */
export interface Callgrind {
  node: string;
  dir: string;
  /** Removes the folder. */
  remove(): void;
}

export function prepareCallgrind(): Callgrind {
  const dir = mkdtempSync(join(tmpdir(), "petstore-callgrind-"));
  const node = join(dir, "node");
  // Counting starts off: start-up, the fill and the warm-up run without it, at a few times native speed.
  writeFileSync(
    node,
    `#!/bin/sh\nexec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=${dir}/callgrind.%p ` +
      `--log-file=${dir}/valgrind.%p.log ${JSON.stringify(process.execPath)} "$@"\n`,
  );
  chmodSync(node, 0o755);
  return { node, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

function control(pid: number, ...args: string[]): void {
  execFileSync("callgrind_control", [...args, String(pid)], { stdio: "ignore", timeout: 60_000 });
}

/** What callgrind counted of one process: its instructions, and the dump they are in (for bench/functions.ts). */
export interface Count {
  instructions: number;
  part: string;
}

/** The instructions process `pid` runs while `work` runs (counting on, zeroed, then dumped). */
export async function countInstructions(callgrind: Callgrind, pid: number, work: () => Promise<void>): Promise<Count> {
  control(pid, "--instr=on");
  control(pid, "--zero");
  await work();
  control(pid, "--instr=off");
  const before = new Set(readdirSync(callgrind.dir));
  control(pid, "--dump");
  // The dump is a new part file, callgrind.<pid>.<n>: its "totals:" line is the count since the zero.
  const part = readdirSync(callgrind.dir).find((name) => name.startsWith(`callgrind.${pid}.`) && !before.has(name));
  if (part === undefined) throw new Error(`callgrind: no dump of process ${pid} in ${callgrind.dir}`);
  const path = join(callgrind.dir, part);
  const totals = /^totals: (\d+)/m.exec(readFileSync(path, "utf8"));
  if (totals === null) throw new Error(`callgrind: no totals in ${part}`);
  return { instructions: Number(totals[1]), part: path };
}
