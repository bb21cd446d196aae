/**
 * examples/client-testing: a Pet Store client's tests against `startTestServer`, run with two
 * runners as their users run them: uvu (`uvu -r tsx examples/client-testing`) and node:test
 * (`node --import tsx --test …`). The test kit imports neither.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runProgram } from "../support/program.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: runners may colour their summary.
const plain = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, "");

test("examples/client-testing with uvu: the client's tests (seed, reset, retry on 503, slow answer) all pass", async () => {
  const { code, stdout, stderr } = await runProgram(
    ["node_modules/uvu/bin.js", "-r", "tsx", "examples/client-testing", "\\.test\\.ts$"],
    { NO_COLOR: "1", FORCE_COLOR: "0" },
  );
  const out = plain(stdout);
  const total = Number(/Total:\s+(\d+)/.exec(out)?.[1]);
  const passed = Number(/Passed:\s+(\d+)/.exec(out)?.[1]);
  assert.is(code, 0, `uvu failed:\n${out.replace(/^\s*(Total|Passed|Skipped):/gm, "  $1 =")}\n${stderr}`);
  assert.ok(total >= 6, `at least the 6 example tests ran (got ${total})`);
  assert.is(passed, total);
});

test("examples/client-testing with node:test: the same kit under Node's own runner passes", async () => {
  // TAP named: since Node 23 the default reporter is "spec" even when the output is not a terminal.
  const { code, stdout, stderr } = await runProgram(
    ["--test", "--test-reporter=tap", "examples/client-testing/pet-client.node-test.ts"],
    { NO_COLOR: "1", FORCE_COLOR: "0" },
  );
  const out = plain(stdout);
  assert.is(code, 0, `node --test failed:\n${out}\n${stderr}`);
  assert.match(out, /^# pass 3$/m);
  assert.match(out, /^# fail 0$/m);
});

test.run();
