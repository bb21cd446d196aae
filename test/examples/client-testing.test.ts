/**
 * examples/client-testing: the shop's tests (pages, a lost answer replayed, a 503 waited out, a
 * test store's fetch) pass under four runners, run as their users run them: uvu, node:test,
 * Vitest (no configuration) and Jest (ESM with ts-jest, jest.config.js and tsconfig.json beside
 * the test). The test kit imports none of them. Vitest 5 needs Node.js 22.12 or later: on an older
 * Node it runs on one from PETSTORE_NODE_BINARIES, or is skipped loudly (failed with CI=true).
 */
import { execFileSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startProgram } from "../support/program.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: runners may colour their summary.
const plain = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, "");
const QUIET = { NO_COLOR: "1", FORCE_COLOR: "0" };
const TESTS = 4;

/** Runs `node <args>` (or `node --import tsx <args>` without `node`) in the repository; its exit code and output. */
async function run(args: string[], env: Record<string, string> = {}, node?: string) {
  const program = startProgram(args, { ...QUIET, ...env }, node === undefined ? {} : { command: node });
  try {
    const code = await program.exited(120_000);
    return { code, out: plain(program.stdout() + program.stderr()) };
  } finally {
    await program.kill();
  }
}

/** A Node.js of at least 22.12 (Vitest 5's floor): this one, or one CI installed. */
function modernNode(): string | undefined {
  const atLeast = (version: string) => {
    const [major = 0, minor = 0] = version.replace(/^v/, "").split(".").map(Number);
    return major > 22 || (major === 22 && minor >= 12);
  };
  if (atLeast(process.version)) return process.execPath;
  for (const binary of (process.env.PETSTORE_NODE_BINARIES ?? "").split(":").filter(Boolean)) {
    const version = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
    if (atLeast(version)) return binary;
  }
  return undefined;
}

test("examples/client-testing with uvu: the shop's tests pass", async () => {
  const { code, out } = await run(
    ["node_modules/uvu/bin.js", "-r", "tsx", "examples/client-testing/uvu", "\\.test\\.ts$"],
    {},
    process.execPath,
  );
  assert.is(code, 0, out);
  assert.match(out, new RegExp(`Passed:\\s+${TESTS}\\b`));
});

test("examples/client-testing with node:test: the same tests under Node's own runner", async () => {
  // TAP named: since Node 23 the default reporter is "spec" even when the output is not a terminal.
  const { code, out } = await run([
    "--test",
    "--test-reporter=tap",
    "examples/client-testing/node-test/pet-shop.test.ts",
  ]);
  assert.is(code, 0, out);
  assert.match(out, new RegExp(`^# pass ${TESTS}$`, "m"));
  assert.match(out, /^# fail 0$/m);
});

test("examples/client-testing with Vitest: no configuration", async () => {
  const node = modernNode();
  if (node === undefined) {
    if (process.env.CI === "true") assert.unreachable("Vitest 5 needs Node.js 22.12+; none found");
    console.log("\n*** SKIPPED: Vitest example: Vitest 5 needs Node.js 22.12+ (set PETSTORE_NODE_BINARIES) ***\n");
    return;
  }
  const { code, out } = await run(
    ["node_modules/vitest/vitest.mjs", "run", "--root", "examples/client-testing/vitest"],
    {},
    node,
  );
  assert.is(code, 0, out);
  assert.match(out, new RegExp(`Tests\\s+${TESTS} passed`));
});

test("examples/client-testing with Jest: ESM through ts-jest's preset, and it ends by itself", async () => {
  const { code, out } = await run(
    ["node_modules/jest/bin/jest.js", "--config", "examples/client-testing/jest/jest.config.js"],
    { NODE_OPTIONS: "--experimental-vm-modules" },
    process.execPath,
  );
  assert.is(code, 0, out);
  assert.match(out, new RegExp(`Tests:\\s+${TESTS} passed, ${TESTS} total`));
  assert.not.match(out, /did not exit one second after/);
});

test("examples/client-testing/jest type-checks with its tsconfig.json (types: jest, node)", async () => {
  const { code, out } = await run(
    ["node_modules/typescript/bin/tsc", "-p", "examples/client-testing/jest/tsconfig.json", "--noEmit"],
    {},
    process.execPath,
  );
  assert.is(code, 0, out);
});

test.run();
