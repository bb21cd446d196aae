/**
 * Instructions by function (`npm run bench -- --instructions --functions H3`): where a counted
 * request's instructions go, for ours and for the baseline, and which functions make the
 * difference. callgrind names C++ and V8's builtins itself; JavaScript compiled at run time is an
 * address to it, named here from the perf map V8 writes with `--perf-basic-prof`
 * (/tmp/perf-<pid>.map: start, size and name of each piece of code).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";

/** The Node flags that make V8 write the map (and its log, which the flag turns on, to stdout: the bench discards it). */
export const PERF_MAP_FLAGS = ["--perf-basic-prof", "--no-logfile-per-isolate", "--logfile=-"];

interface CodeRange {
  start: number;
  end: number;
  name: string;
}

function perfMapPath(pid: number): string {
  return `/tmp/perf-${pid}.map`;
}

/** The pieces of code in V8's perf map of `pid`, by start address. */
function readPerfMap(pid: number): CodeRange[] {
  const path = perfMapPath(pid);
  if (!existsSync(path)) return [];
  const ranges: CodeRange[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (match === null) continue;
    const start = Number.parseInt(match[1] as string, 16);
    ranges.push({ start, end: start + Number.parseInt(match[2] as string, 16), name: match[3] as string });
  }
  return ranges.sort((a, b) => a.start - b.start);
}

/** The name of the code at `address`, or undefined. */
function nameAt(ranges: CodeRange[], address: number): string | undefined {
  let lo = 0;
  let hi = ranges.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ranges[mid] as CodeRange).start <= address) lo = mid + 1;
    else hi = mid;
  }
  const range = ranges[lo - 1];
  return range !== undefined && address < range.end ? range.name : undefined;
}

/**
 * Instructions a request by function in callgrind's dump `part` of process `pid`, over `requests`
 * requests. Code V8 compiled is named "JS <name> <file:line>" (a project file relative to the
 * checkout), a piece the map does not know "JS ?".
 */
export function countByFunction(part: string, pid: number, requests: number): Map<string, number> {
  const annotated = execFileSync("callgrind_annotate", ["--threshold=100", "--auto=no", part], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  const ranges = readPerfMap(pid);
  const root = new URL("../", import.meta.url).href;
  const counts = new Map<string, number>();
  // Lines like "  1,234,567 (12.34%)  file:function [object]", after the header naming the columns.
  const body = annotated.slice(annotated.lastIndexOf("file:function"));
  for (const line of body.split("\n")) {
    const match = /^\s*([0-9,]+) \(\s*[0-9.]+%\)\s+(.*)$/.exec(line);
    if (match === null) continue;
    const instructions = Number((match[1] as string).replaceAll(",", ""));
    let name = (match[2] as string).replace(/\s*\[[^\]]*\]$/, "").replace(/^\?\?\?:/, "");
    const address = /^0x([0-9a-f]+)/.exec(name);
    if (address !== null) {
      const known = nameAt(ranges, Number.parseInt(address[1] as string, 16));
      name = known === undefined ? "JS ?" : `JS ${known.replace(/^JS:[*~+^']*/, "").replaceAll(root, "")}`;
    }
    counts.set(name, (counts.get(name) ?? 0) + instructions / requests);
  }
  return counts;
}

/** Removes the perf map of `pid` (V8 does not: /tmp would fill with them). */
export function removePerfMap(pid: number): void {
  rmSync(perfMapPath(pid), { force: true });
}

/** The `top` functions whose instructions a request differ most between ours and the baseline, as text. */
export function describeDifference(ours: Map<string, number>, base: Map<string, number>, top = 30): string {
  const names = new Set([...ours.keys(), ...base.keys()]);
  const rows = [...names].map((name) => ({ name, ours: ours.get(name) ?? 0, base: base.get(name) ?? 0 }));
  rows.sort((a, b) => Math.abs(b.ours - b.base) - Math.abs(a.ours - a.base));
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const lines = [
    `instructions a request by function (ours ${Math.round(sum(ours))}, baseline ${Math.round(sum(base))}; largest differences first):`,
    "   ours−base      ours  baseline  function",
  ];
  for (const r of rows.slice(0, top)) {
    const cell = (n: number) => String(Math.round(n)).padStart(9);
    lines.push(`  ${cell(r.ours - r.base)} ${cell(r.ours)} ${cell(r.base)}  ${r.name.slice(0, 120)}`);
  }
  return lines.join("\n");
}
