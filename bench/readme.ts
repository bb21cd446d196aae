/** Writes a full run's summary between the README's bench:results markers, and every row in docs/performance.md. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performancePage, type Results, readmeBlock } from "./report.ts";

/** Rewrites README.md's bench block and docs/performance.md under `root` from `results`. */
export function writeReadme(results: Results, root: string): void {
  const path = join(root, "README.md");
  const readme = readFileSync(path, "utf8");
  const from = readme.indexOf("<!-- bench:results:start -->");
  const to = readme.indexOf("<!-- bench:results:end -->");
  if (from === -1 || to < from) throw new Error("README.md has no bench:results:start … bench:results:end markers");
  writeFileSync(path, readme.slice(0, from) + readmeBlock(results) + readme.slice(to));
  console.log(`updated ${path}`);
  const page = join(root, "docs", "performance.md");
  writeFileSync(page, performancePage(results));
  console.log(`wrote ${page}`);
}
