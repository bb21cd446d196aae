/**
 * `npm test` (test/run.ts): it fails when Node prints a warning while the tests run, even when
 * every test passes (a `MaxListenersExceededWarning` or a deprecation is a defect to fix, not
 * noise), and when its filter matches no test file (a run of nothing is no pass). Its last line
 * says whether the run was complete or suites were skipped.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "../support/program.ts";

// The fixture suites, in a folder that sees the repository's node_modules (for uvu).
const TMP = mkdtempSync(join(tmpdir(), "petstore-runner-"));
const DIR = join(TMP, "suites");
mkdirSync(DIR);
symlinkSync(join(ROOT, "node_modules"), join(TMP, "node_modules"), "dir");
writeFileSync(join(TMP, "package.json"), '{ "type": "module" }\n');
test.after(() => rmSync(TMP, { recursive: true, force: true }));

const suite = (body: string) => `import { test } from "uvu";\n${body}\ntest.run();\n`;
writeFileSync(join(DIR, "quiet.test.ts"), suite(`test("quiet", () => {});`));
writeFileSync(
  join(DIR, "noisy.test.ts"),
  suite(`test("noisy", () => { process.emitWarning("11 exit listeners added", "MaxListenersExceededWarning"); });`),
);

writeFileSync(
  join(DIR, "skipping.test.ts"),
  suite(
    `console.log("\\n*** SKIPPED: fixture tests on redis: nothing answers (with CI=true this fails) ***\\n");\n` +
      `test("what runs", () => {});`,
  ),
);

/** Runs test/run.ts on the fixture suites matching `pattern`; the summaries are disguised from CI's tally. */
function runner(pattern: string) {
  const result = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "test/run.ts"), pattern], {
    cwd: ROOT,
    env: { ...process.env, PETSTORE_TEST_DIR: DIR, PETSTORE_TEST_RUN_INNER: "", NO_COLOR: "1" },
    encoding: "utf8",
    timeout: 60_000,
  });
  const output = `${result.stdout}${result.stderr}`.replace(/^(\s*)(Total|Passed|Skipped):/gm, "$1$2 =");
  return { status: result.status, output };
}

test("npm test: a run whose tests pass but where Node prints a warning fails, naming the warning", () => {
  const { status, output } = runner("noisy");
  assert.is(status, 1, output);
  assert.match(output, /FAILED: Node printed 1 warning/);
  assert.match(output, /\(node:\d+\) MaxListenersExceededWarning: 11 exit listeners added/);
});

test("npm test: a run without warnings passes", () => {
  const { status, output } = runner("quiet");
  assert.is(status, 0, output);
  assert.not.match(output, /FAILED/);
});

test("npm test: a filter that matches no test file fails and says so", () => {
  const { status, output } = runner("core");
  assert.is(status, 1, output);
  assert.match(output, /no test file matches "core"/);
  assert.not.match(output, /Total =/);
});

test("npm test: a filter is a path under the test folder, or the same path from the repository", () => {
  for (const filter of ["quiet", `${DIR}/quiet.test.ts`]) {
    const { status, output } = runner(filter);
    assert.is(status, 0, output);
    assert.match(output, /Total = +1\b/);
  }
});

/** The last line the runner printed. */
const lastLine = (output: string) => output.trimEnd().split("\n").at(-1);

test("npm test: a run that printed a SKIPPED line ends with INCOMPLETE, naming what was skipped", () => {
  const { status, output } = runner("skipping");
  assert.is(status, 0, output);
  assert.is(
    lastLine(output),
    "test/run.ts: INCOMPLETE: 1 skipped (fixture tests on redis), each named above; " +
      "with CI=true a missing service, browser or runtime fails instead",
  );
});

test("npm test: a run where nothing was skipped ends with complete", () => {
  const { status, output } = runner("quiet");
  assert.is(status, 0, output);
  assert.is(lastLine(output), "test/run.ts: complete: no suite was skipped");
});

test.run();
