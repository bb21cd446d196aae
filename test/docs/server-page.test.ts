/**
 * docs/SERVER.md documents every setting the standalone server reads: each flag of `--help` and
 * each variable beside it appears in the page's table, so a new setting cannot ship undocumented.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { USAGE } from "../../server/config.ts";
import { ROOT } from "../support/program.ts";

test("docs/SERVER.md: every flag and variable of --help is in the settings table", () => {
  const page = readFileSync(join(ROOT, "docs/SERVER.md"), "utf8");
  const table = page.split("\n").filter((line) => line.startsWith("| ") && line.includes("`"));
  const flags = [...new Set([...USAGE.matchAll(/(--[a-z][a-z-]+)/g)].map((m) => m[1] as string))].filter(
    (flag) => flag !== "--help",
  );
  // The variables: the second column of --help's list, and PETSTORE_API_KEYS (no flag on purpose).
  const variables = [...USAGE.matchAll(/^ {2}--[a-z-]+ +([A-Z][A-Z_]+) /gm)].map((m) => m[1] as string);
  variables.push("PETSTORE_API_KEYS");
  assert.ok(flags.length >= 8 && variables.length >= 8, `--help lists the settings (${flags}; ${variables})`);
  for (const name of [...flags, ...variables]) {
    assert.ok(
      table.some((row) => row.includes(`\`${name}\``)),
      `${name} is in docs/SERVER.md's table`,
    );
  }
});

test.run();
