/**
 * docs/testing.md's configuration for Jest is complete: a new project with the packed package, the
 * runners from the npm cache, the page's package.json script, jest.config.js and tsconfig.json as
 * written, and the example's tests with their imports as a user writes them (`petstore-lib/...`,
 * `./pet-shop.js`), type-checks and passes under `npm test`; the same tests, and the page's own
 * Vitest test as written, pass under Vitest with no configuration (on a Node.js of 22.12 or later,
 * as Vitest 5 needs).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanUp, consumer, ROOT, versionOf } from "../support/packed.ts";

const DOC = readFileSync(join(ROOT, "docs/testing.md"), "utf8");

/** The block after `<!-- runners: <runner> <what> -->` in docs/testing.md. */
function block(what: string, runner = "jest"): string {
  const marker = `<!-- runners: ${runner} ${what} -->`;
  const at = DOC.indexOf(marker);
  assert.ok(at !== -1, `docs/testing.md has ${marker}`);
  const open = DOC.indexOf("```", at);
  const start = DOC.indexOf("\n", open) + 1;
  return DOC.slice(start, DOC.indexOf("\n```", start));
}

/** An example file with the imports a user writes. */
function asUser(file: string): string {
  return readFileSync(join(ROOT, "examples/client-testing", file), "utf8")
    .replaceAll('"../../../testing/index.ts"', '"petstore-lib/testing"')
    .replaceAll('"../../client/index.ts"', '"petstore-lib/client"')
    .replaceAll('"../../lib/index.ts"', '"petstore-lib"')
    .replaceAll('"../../lib/entries/schemas.ts"', '"petstore-lib/schemas"')
    .replaceAll('"../pet-shop.ts"', '"./pet-shop.js"');
}

/** A Node.js of at least 22.12 (Vitest 5's floor): this one, or one CI installed. */
function modernNode(): string | undefined {
  const atLeast = (version: string) => {
    const [major = 0, minor = 0] = version.replace(/^v/, "").split(".").map(Number);
    return major > 22 || (major === 22 && minor >= 12);
  };
  if (atLeast(process.version)) return process.execPath;
  return (process.env.PETSTORE_NODE_BINARIES ?? "")
    .split(":")
    .filter(Boolean)
    .find((binary) => atLeast(execFileSync(binary, ["--version"], { encoding: "utf8" })));
}

let dir = "";
test.before(() => {
  const runners = ["jest", "ts-jest", "@types/jest", "typescript", "@types/node", "vitest"];
  dir = consumer(runners.map((name) => `${name}@${versionOf(name)}`));
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  pkg.scripts = JSON.parse(block("package.json scripts"));
  writeFileSync(join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  writeFileSync(join(dir, "jest.config.js"), block("jest.config.js"));
  writeFileSync(join(dir, "tsconfig.json"), block("tsconfig.json"));
  mkdirSync(join(dir, "test"), { recursive: true });
  writeFileSync(join(dir, "test/pet-shop.ts"), asUser("pet-shop.ts"));
  writeFileSync(join(dir, "test/pet-shop.test.ts"), asUser("jest/pet-shop.test.ts"));
});
test.after(cleanUp);

const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1", CI: "true" };

test("docs/testing.md's tsconfig.json type-checks the Jest tests (types: jest, node) against the packed .d.ts", () => {
  const tsc = spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", ".", "--noEmit"], {
    cwd: dir,
    env,
    encoding: "utf8",
  });
  assert.is(tsc.status, 0, tsc.stdout + tsc.stderr);
});

test("docs/testing.md's package.json script and jest.config.js: npm test runs the tests with Jest and passes", () => {
  const run = spawnSync("npm", ["test"], { cwd: dir, env, encoding: "utf8", timeout: 180_000 });
  const out = run.stdout + run.stderr;
  assert.is(run.status, 0, out);
  assert.match(out, /Tests:\s+4 passed, 4 total/);
});

test("Vitest runs the same tests with no configuration (vitest run), and docs/testing.md's Vitest test as written", () => {
  const node = modernNode();
  if (node === undefined) {
    if (process.env.CI === "true") assert.unreachable("Vitest 5 needs Node.js 22.12+; none found");
    console.log(
      "\n*** SKIPPED: Vitest in a new project: Vitest 5 needs Node.js 22.12+ (set PETSTORE_NODE_BINARIES) ***\n",
    );
    return;
  }
  const vitest = asUser("vitest/pet-shop.test.ts");
  writeFileSync(join(dir, "test/pet-shop.test.ts"), vitest);
  writeFileSync(join(dir, "test/lost-answer.test.ts"), block("test/lost-answer.test.ts", "vitest"));
  const run = spawnSync(node, ["node_modules/vitest/vitest.mjs", "run"], {
    cwd: dir,
    env,
    encoding: "utf8",
    timeout: 180_000,
  });
  const out = run.stdout + run.stderr;
  assert.is(run.status, 0, out);
  assert.match(out, /Tests\s+5 passed/);
});

test.run();
