/**
 * The README's Quick start works for a new user. For each use (hapi, Node http, unit tests), in a
 * new empty folder: the README's set-up commands exactly (`npm init -y`, `npm pkg set type=module`,
 * the installs), `petstore-lib` installed as the README says to before publication (the tarball
 * `npm pack` writes in a clone, by its path: here a copy packed once, PETSTORE_LIB), then its code blocks saved
 * under the file names it gives, then its run commands. A server must print the API's URL with
 * PORT=0 and answer there (401 without a key, 200 with the README's key); the unit tests must pass.
 * Packages come from the npm cache where it has them, else from the registry.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "../support/program.ts";
import { type ReadmeBlock, readmeBlocks } from "../support/readme.ts";
import { npmEnv, packedPackage } from "../support/tarball.ts";

const README = readFileSync(join(ROOT, "README.md"), "utf8");
const blocks = readmeBlocks(README).filter((b) => b.quickstart !== undefined);
const TMP = mkdtempSync(join(tmpdir(), "petstore-quickstart-"));
test.after(() => rmSync(TMP, { recursive: true, force: true }));

const USES = ["hapi", "node-http", "unit-testing"];

/** How the README packs the library in a clone (packedPackage() does the same: npm ci's copy, npm pack). */
const PACK = '(cd "$PETSTORE_LIB" && npm ci && npm pack)';

/** The commands of a block, with the README's clone (`PETSTORE_LIB=…`) the folder where the tarball was packed. */
function commands(block: ReadmeBlock, packedDir: string): string {
  return block.code
    .split("\n")
    .map((line) => {
      if (/^PETSTORE_LIB=/.test(line)) return `PETSTORE_LIB=${packedDir}`;
      if (line.startsWith(PACK)) return ": packed already"; // by packedPackage(), from a fresh copy
      return line;
    })
    .join("\n");
}

interface Run {
  code: Promise<number | null>;
  output(): string;
  stop(signal?: NodeJS.Signals): void;
}

/** Runs shell commands in `cwd` (bash -e, own process group), as a user at a terminal would. */
function shell(script: string, cwd: string, env: NodeJS.ProcessEnv): Run {
  const child = spawn("bash", ["-e", "-o", "pipefail", "-c", script], { cwd, env, detached: true });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (s: string) => {
    out += s;
  });
  child.stderr.setEncoding("utf8").on("data", (s: string) => {
    out += s;
  });
  const code = new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  const stop = (signal: NodeJS.Signals = "SIGTERM") => {
    try {
      process.kill(-(child.pid as number), signal);
    } catch {
      // gone already
    }
  };
  // uvu's summary lines are disguised, so that CI's tally counts only this suite's.
  return { code, output: () => out.replace(/^(\s*)(Total|Passed|Skipped):/gm, "$1$2 ="), stop };
}

function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(what())), ms).unref()),
  ]);
}

/** The environment of a new user's shell: the test's PATH and npm cache, nothing of an outer npm run. */
function userEnv(): NodeJS.ProcessEnv {
  return npmEnv({ PORT: "0", NO_COLOR: "1", npm_config_prefer_offline: "true", npm_config_loglevel: "error" });
}

test("quick start: before publication, the README packs a clone and installs that tarball by its path, as this test does", () => {
  const setup = blocks.find((b) => b.quickstart?.use === "all" && b.quickstart.role === "setup");
  const lines = setup?.code.split("\n") ?? [];
  assert.ok(/^PETSTORE_LIB=\S+/.test(lines[0] ?? ""), "README: the set-up names the clone first (PETSTORE_LIB=…)");
  assert.ok(lines[1]?.startsWith(PACK), `README: then packs it: ${PACK}`);
  const file = basename(packedPackage().tarball);
  assert.ok(lines[1]?.includes(`writes ${file}`), "the tarball's name in the README is the one npm pack writes");
  assert.ok(
    lines.some((l) => l.startsWith(`npm install "$PETSTORE_LIB/${file}"`)),
    "the README installs that file",
  );
});

for (const use of USES) {
  test(`quick start (${use}): the README's commands and code run as written in a new npm init -y project`, async () => {
    const { dir: packedDir } = packedPackage();
    const mine = blocks.filter((b) => b.quickstart?.use === use || b.quickstart?.use === "all");
    const setup = mine.filter((b) => b.quickstart?.role === "setup");
    const files = mine.filter((b) => b.quickstart?.role !== "setup" && b.quickstart?.role !== "run");
    const runs = mine.filter((b) => b.quickstart?.role === "run");
    assert.ok(setup.length > 0 && files.length > 0 && runs.length === 1, `${use}: set-up, files and one run block`);

    // Set-up, from an empty folder; the project is where its `cd` goes.
    const home = join(TMP, use);
    mkdirSync(home);
    const script = setup.map((b) => commands(b, packedDir)).join("\n");
    const setupRun = shell(script, home, userEnv());
    const setupCode = await within(setupRun.code, 180_000, () => `set-up did not finish:\n${setupRun.output()}`);
    assert.is(setupCode, 0, `set-up:\n${script}\n${setupRun.output()}`);
    const into = /^\s*(?:mkdir\s+(?:-p\s+)?\S+\s*&&\s*)?cd\s+(\S+)/m.exec(script)?.[1];
    const project = into === undefined ? home : join(home, into);
    const pkg = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
    assert.is(pkg.type, "module", "the project is ESM, as the README has it say");
    assert.ok(existsSync(join(project, "node_modules", "petstore-lib", "dist")), "petstore-lib from the tarball");

    for (const file of files) writeFileSync(join(project, file.quickstart?.role as string), file.code);

    const run = shell(commands(runs[0] as ReadmeBlock, packedDir), project, userEnv());
    try {
      if (use === "unit-testing") {
        const code = await within(run.code, 180_000, () => `the tests did not finish:\n${run.output()}`);
        assert.is(code, 0, `the README's tests pass:\n${run.output()}`);
        assert.match(run.output(), /Passed =\s+[1-9]/, "uvu ran the tests");
        return;
      }
      const url = await within(
        new Promise<string>((resolve, reject) => {
          const timer = setInterval(() => {
            const found = /(http:\/\/127\.0\.0\.1:\d+\/v1)\b/.exec(run.output())?.[1];
            if (found !== undefined) {
              clearInterval(timer);
              resolve(found);
            }
          }, 50);
          void run.code.then((code) => {
            clearInterval(timer);
            reject(new Error(`exited with ${code} before serving:\n${run.output()}`));
          });
        }),
        180_000,
        () => `no http://127.0.0.1:<port>/v1 printed:\n${run.output()}`,
      );
      assert.not.match(url, /:0\//, "the real port is printed");
      const anonymous = await fetch(`${url}/pets`);
      assert.is(anonymous.status, 401);
      await anonymous.arrayBuffer();
      const listed = await fetch(`${url}/pets`, { headers: { authorization: "Bearer change-me" } });
      assert.is(listed.status, 200, "the README's key works");
      assert.is(await listed.text(), "[]");
    } finally {
      run.stop();
      await within(run.code, 15_000, () => "no stop on SIGTERM").catch(() => run.stop("SIGKILL"));
    }
  });
}

test.run();
