/**
 * The numbers the documentation gives are the bench's: the README's Performance summary and
 * docs/performance.md are what bench/results.json makes of its rows, and the sizes quoted in prose
 * are the last full run's: the Worker bundle's rounded to the KB, an idempotency key's heap within a tenth.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { performancePage, type Results, type Row, readmeBlock } from "../../bench/report.ts";
import { ROOT } from "../support/program.ts";

const results = JSON.parse(readFileSync(join(ROOT, "bench/results.json"), "utf8")) as Results;
const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

function rowOf(id: string): Row {
  const found = results.rows.find((r) => r.id === id);
  if (found === undefined || found.ours === null) throw new Error(`bench/results.json has no measured ${id} row`);
  return found;
}

/** Every number `pattern` finds in `file` (its first group), at least one. */
function quoted(file: string, pattern: RegExp): number[] {
  const found = [...read(file).matchAll(new RegExp(pattern, "g"))].map((m) => Number(m[1]));
  assert.ok(found.length > 0, `${file} quotes ${pattern}`);
  return found;
}

function near(value: number, measured: number, what: string): void {
  assert.ok(Math.abs(value - measured) <= measured * 0.1, `${what}: ${value} is not within 10% of ${measured}`);
}

test("bench/results.json is a full run (not --quick) with every row", () => {
  assert.is(results.quick, false);
  for (const id of ["H1", "H2", "H3", "F1", "F2", "F3", "O1", "B1", "S1", "S2", "K1", "M1", "M2", "I1", "I2", "I3"]) {
    rowOf(id);
  }
});

test("README Performance: the summary between the bench markers is what bench/results.json gives", () => {
  const readme = read("README.md");
  const from = readme.indexOf("<!-- bench:results:start -->");
  const to = readme.indexOf("<!-- bench:results:end -->");
  assert.ok(from !== -1 && to > from, "the README has its bench markers");
  assert.fixture(readme.slice(from, to), readmeBlock(results));
});

test("docs/performance.md: every row as bench/results.json holds it", () => {
  assert.fixture(read("docs/performance.md"), performancePage(results));
});

/** A size quoted in whole KB is the measured one rounded (a reader compares it with the bench row's). */
function rounded(value: number, measured: number, what: string): void {
  assert.ok(Math.abs(value - measured) < 1, `${what}: ${value} KB is not ${measured} KB rounded`);
}

test("the Worker bundle's size quoted in README and docs/fetch.md is bench row K1's, rounded to the KB", () => {
  const k1 = rowOf("K1");
  for (const value of quoted("README.md", /bundles to about (\d+) KB minified/)) {
    rounded(value, k1.ours as number, "README");
  }
  for (const value of quoted("docs/fetch.md", /the Worker is about (\d+) KB minified/)) {
    rounded(value, k1.ours as number, "docs/fetch.md");
  }
  const gzipped = Number(/([\d.]+) KB gzipped/.exec(k1.note ?? "")?.[1]);
  for (const value of quoted("docs/fetch.md", /KB minified, (\d+) KB gzipped/)) rounded(value, gzipped, "gzipped");
});

test("an idempotency key's heap quoted in README and docs/idempotency.md is bench row M2's", () => {
  const m2 = rowOf("M2").ours as number;
  for (const value of quoted("README.md", /about (\d+) bytes per key in memory/)) near(value, m2, "README");
  for (const value of quoted("docs/idempotency.md", /a key record costs about (\d+) bytes/)) {
    near(value, m2, "docs/idempotency.md");
  }
});

test.run();
