/**
 * `npm test`: every test/**\/*.test.ts (or those whose path matches argv[2]) in one uvu run, then a
 * guaranteed end; a filter that matches no test file fails and says so. uvu waits for the event loop to drain; a handle some test left open would
 * otherwise hang CI after the summary, so it is named on stderr and the process exits with
 * uvu's own exit code.
 *
 * The run happens in a child process whose output is passed through and read: a warning from
 * Node (a line such as `(node:1234) MaxListenersExceededWarning: …`, from the tests' process or
 * any process they start that shares its output) fails the run, after the summary, with the
 * lines named. A warning printed by a test on purpose is not one: the test reads it from a child
 * process's piped output, which never reaches this one. The last line says whether the run was
 * complete or suites printed SKIPPED (./support/skips.ts).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parse } from "uvu/parse";
import { run } from "uvu/run";
import { completeness, skippedBy } from "./support/skips.ts";

const INNER = "PETSTORE_TEST_RUN_INNER";

/** A line Node prints for a process warning: `(node:1234) SomeWarning: …` (also `[DEP0040] DeprecationWarning`). */
const NODE_WARNING = /^\(node:\d+\) (?:\[[A-Z0-9_]+\] )?[A-Za-z]*Warning: /;

if (!process.env[INNER]) {
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      env: { ...process.env, [INNER]: "1" },
      stdio: ["inherit", "pipe", "pipe"],
    },
  );
  const warnings: string[] = [];
  const skipped: string[] = [];
  const watch = (from: NodeJS.ReadableStream, to: NodeJS.WriteStream) => {
    let partial = "";
    from.setEncoding("utf8");
    from.on("data", (chunk: string) => {
      to.write(chunk);
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (NODE_WARNING.test(line)) warnings.push(line);
        const what = skippedBy(line);
        if (what !== undefined) skipped.push(what);
      }
    });
    from.on("end", () => {
      if (NODE_WARNING.test(partial)) warnings.push(partial);
    });
  };
  watch(child.stdout, process.stdout);
  watch(child.stderr, process.stderr);
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  const code = await new Promise<number>((resolve) =>
    child.on("close", (status, signal) => resolve(status ?? (signal ? 1 : 0))),
  );
  if (warnings.length > 0) {
    process.stderr.write(
      `\ntest/run.ts: FAILED: Node printed ${warnings.length} warning(s) during the tests:\n` +
        `${warnings.map((w) => `  ${w}`).join("\n")}\n`,
    );
  }
  process.stdout.write(`\n${completeness(skipped)}\n`);
  process.exit(warnings.length > 0 && code === 0 ? 1 : code);
} else {
  // PETSTORE_TEST_DIR: another folder of suites (the runner's own test points it at a fixture).
  const dir = process.env.PETSTORE_TEST_DIR ?? "test";
  const { suites } = await parse(dir, /\.test\.ts$/, {});
  // The filter picks among the suites by their path under test/ ("lib/", "storage/sqlite"); a path
  // given from the repository ("test/lib/store.test.ts") works too.
  const filter = process.argv[2];
  const selected =
    filter === undefined
      ? suites
      : suites.filter((s) => {
          const pattern = new RegExp(filter.startsWith(`${dir}/`) ? filter.slice(dir.length + 1) : filter);
          return pattern.test(s.name) || pattern.test(`${dir}/${s.name}`);
        });
  if (selected.length === 0) {
    process.stderr.write(
      `test/run.ts: no test file matches ${JSON.stringify(filter)} (a regular expression on paths under ${dir}/, ` +
        `e.g. 'lib/' or 'storage/sqlite'; the files: ${dir}/**/*.test.ts)\n`,
    );
    process.exit(1);
  }
  await run(selected, { bail: false });

  setTimeout(() => {
    const open = process.getActiveResourcesInfo().filter((r) => r !== "Timeout");
    process.stderr.write(`test/run.ts: still open after the summary (${open.join(", ")}): exiting\n`);
    process.exit();
  }, 5000).unref();
}
