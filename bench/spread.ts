/**
 * `npx tsx bench/spread.ts <earlier results.json …>`: adds to bench/results.json (the last full
 * run) each row's spread over it and the earlier full runs named, oldest first, then writes the
 * README's summary and docs/performance.md again from it. For "holds in N runs in a row": run
 * `npm run bench -- --out run-1.json` and so on, the last with `--readme`, then this.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { writeReadme } from "./readme.ts";
import { type Results, spreadOf } from "./report.ts";

const root = process.cwd();
const lastPath = join(root, "bench", "results.json");
const read = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Results;
const earlier = process.argv.slice(2).map((path) => read(resolve(path)));
if (earlier.length === 0) throw new Error("bench/spread.ts: name the earlier runs' results files, oldest first");
const last = read(lastPath);
const runs = [...earlier, last];
const quick = runs.filter((run) => run.quick);
if (quick.length > 0) throw new Error("bench/spread.ts: a --quick run says nothing about speed");
const results: Results = { ...last, spread: spreadOf(runs) };
writeFileSync(lastPath, `${JSON.stringify(results, null, 2)}\n`);
console.log(`wrote ${lastPath} (${runs.length} runs)`);
writeReadme(results, root);
