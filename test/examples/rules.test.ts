/**
 * examples/rules: the shop's rules and their uvu tests (in isolation, in process and over HTTP),
 * run as the user runs them (`uvu -r tsx examples/rules`), so `npm test` fails when they do.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runProgram } from "../support/program.ts";

test("examples/rules: the user's uvu tests of the shop's rules (isolation, in process, over HTTP) all pass", async () => {
  const { code, stdout, stderr } = await runProgram(
    ["node_modules/uvu/bin.js", "-r", "tsx", "examples/rules", "\\.test\\.ts$"],
    { NO_COLOR: "1", FORCE_COLOR: "0" },
  );
  // biome-ignore lint/suspicious/noControlCharactersInRegex: uvu may colour its summary.
  const plain = stdout.replace(/\u001b\[[0-9;]*m/g, "");
  const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1]);
  const passed = Number(/Passed:\s+(\d+)/.exec(plain)?.[1]);
  assert.is(code, 0, `uvu failed:\n${plain.replace(/^\s*(Total|Passed|Skipped):/gm, "  $1 =")}\n${stderr}`);
  assert.ok(total >= 4, `at least the 4 example tests ran (got ${total})`);
  assert.is(passed, total);
});

test.run();
