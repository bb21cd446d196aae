/**
 * examples/unit-testing: the uvu tests a user writes against the core alone. They run here as
 * the user runs them (`uvu -r tsx examples/unit-testing`), so `npm test` fails when they do.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runProgram } from "../support/program.ts";

test("examples/unit-testing: the user's uvu tests of business rules on the core (no HTTP) all pass", async () => {
  const { code, stdout, stderr } = await runProgram(
    ["node_modules/uvu/bin.js", "-r", "tsx", "examples/unit-testing", "\\.test\\.ts$"],
    { NO_COLOR: "1", FORCE_COLOR: "0" },
  );
  // biome-ignore lint/suspicious/noControlCharactersInRegex: uvu may colour its summary.
  const plain = stdout.replace(/\u001b\[[0-9;]*m/g, "");
  const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1]);
  const passed = Number(/Passed:\s+(\d+)/.exec(plain)?.[1]);
  assert.is(code, 0, `uvu failed:\n${plain.replace(/^\s*(Total|Passed|Skipped):/gm, "  $1 =")}\n${stderr}`);
  assert.ok(total >= 9, `at least the 9 example tests ran (got ${total})`);
  assert.is(passed, total);
});

test.run();
