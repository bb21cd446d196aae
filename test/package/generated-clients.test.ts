/**
 * Generated clients: orval 8 and 7 (fetch client) and @hey-api/openapi-ts generate from the packed
 * package's `petstore-lib/openapi.json` without a warning; tsc type-checks their code with a usage
 * file that reads each documented error's `code` and `status`; and each client walks every page
 * of a test server with `nextCursor`. The generators run from the repository's node_modules (no network).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanUp, consumer, ROOT, run, versionOf } from "../support/packed.ts";
import type { Walk } from "./generated-clients-usage.ts";
import {
  errorAnswers,
  heyApiErrors,
  heyApiProgram,
  ORVAL_FETCH,
  orvalConfig,
  orvalErrors,
  orvalProgram,
  TSCONFIG,
} from "./generated-clients-usage.ts";

const MODULES = join(ROOT, "node_modules");
const CACHE = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "petstore-ci");

/** The generators as the repository installs them (package folder, version, command line). */
const GENERATORS = [
  {
    name: "orval 8",
    folder: "orval",
    bin: "dist/bin/orval.mjs",
    args: ["--config", "orval8.config.mjs", "--fail-on-warnings"],
  },
  { name: "orval 7", folder: "orval7", bin: "dist/bin/orval.js", args: ["--config", "orval7.config.mjs"] },
  {
    name: "@hey-api/openapi-ts",
    folder: "@hey-api/openapi-ts",
    bin: "bin/run.js",
    args: ["-i", "node_modules/petstore-lib/openapi.json", "-o", "src/hey-api", "--no-log-file"],
  },
].map((g) => ({ ...g, version: versionOf(g.folder) }));

/** True when `bin` is Node.js 22.18 or later, which both generators require. */
function recentEnough(bin: string): boolean {
  const out = spawnSync(bin, ["-p", "process.versions.node"], { encoding: "utf8", timeout: 30_000 }).stdout ?? "";
  const [major = 0, minor = 0] = out.trim().split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 18);
}

/** This Node.js when it is recent enough, else one that .ci/run installs (PETSTORE_NODE_BINARIES, the cache). */
function findNode(): string | undefined {
  const given = (process.env.PETSTORE_NODE_BINARIES ?? "").split(":").filter((p) => p !== "");
  const cached = [24, 26, 22].map((major) => join(CACHE, `node-${major}`, "bin", "node"));
  return [process.execPath, ...given, ...cached].find((bin) => {
    try {
      return recentEnough(bin);
    } catch {
      return false;
    }
  });
}

const node = findNode();
const skipped = node === undefined && process.env.CI !== "true";
if (skipped)
  console.log(
    "\n*** SKIPPED: generated clients: no Node.js 22.18 or later (.ci/run installs one; with CI=true this fails) ***\n",
  );
/** The suite's tests, skipped when no Node.js can run the generators (outside CI). */
const check = skipped ? test.skip : test;

/** docs/OPENAPI.md's example of pages with a generated client, its imports pointed at the generated folder. */
function docsExample(): string {
  const page = readFileSync(join(ROOT, "docs", "OPENAPI.md"), "utf8");
  const code = /```ts\n([\s\S]*?)\n```/.exec(page.slice(page.indexOf("## Generated clients")))?.[1] ?? "";
  assert.match(code, /nextCursor\(response\)/);
  return code.replace('"./client/client.gen"', '"./hey-api/client.gen"').replace('from "./client"', 'from "./hey-api"');
}

let dir = "";
let answers: ReturnType<typeof errorAnswers> = [];
const outputs = new Map<string, string>();

/** Runs `args` under the chosen Node.js in the project (bounded); resolves stdout and stderr together. */
function runNode(args: string[], ms = 120_000): string {
  if (node === undefined) throw new Error("no Node.js 22.18 or later: run .ci/run once, or set PETSTORE_NODE_BINARIES");
  const result = spawnSync(node, args, {
    cwd: dir,
    encoding: "utf8",
    timeout: ms,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      TMPDIR: process.env.TMPDIR ?? "/tmp",
      NO_COLOR: "1",
      CI: "true",
    },
  });
  const output = stripVTControlCharacters(`${result.stdout}${result.stderr}`);
  if (result.status !== 0)
    throw new Error(`${args.join(" ")} failed (${result.error?.message ?? `exit ${result.status}`})\n${output}`);
  return output;
}

test.before(() => {
  if (skipped) return;
  dir = consumer([`@types/node@${versionOf("@types/node")}`]); // the tarball and Node's types, as a user has them
  writeFileSync(join(dir, "orval8.config.mjs"), orvalConfig(8));
  writeFileSync(join(dir, "orval7.config.mjs"), orvalConfig(7));
  writeFileSync(join(dir, "src", "orval-fetch.ts"), ORVAL_FETCH);
  writeFileSync(join(dir, "tsconfig.json"), TSCONFIG);
  for (const g of GENERATORS) outputs.set(g.name, runNode([join(MODULES, g.folder, g.bin), ...g.args]));
  answers = errorAnswers(JSON.parse(readFileSync(join(dir, "node_modules/petstore-lib/openapi.json"), "utf8")));
  for (const major of [8, 7]) {
    writeFileSync(join(dir, "src", `orval${major}-errors.ts`), orvalErrors(major, answers));
    writeFileSync(join(dir, "src", `orval${major}-pages.ts`), orvalProgram(major));
  }
  writeFileSync(join(dir, "src", "hey-api-errors.ts"), heyApiErrors(answers));
  writeFileSync(join(dir, "src", "hey-api-pages.ts"), heyApiProgram);
  writeFileSync(join(dir, "src", "docs-example.ts"), docsExample());
});
test.after(cleanUp);

for (const g of GENERATORS) {
  check(`${g.name} ${g.version} generates a client from petstore-lib/openapi.json without a warning`, () => {
    const output = outputs.get(g.name) ?? "";
    console.log(`  ${g.name} ${g.version}: ${output.trim().split("\n").pop()}`);
    assert.not.match(output, /warn|⚠|error|fail|invalid/i, output);
  });
}

check(
  `tsc ${versionOf("typescript")} --noEmit (strict, no skipLibCheck): the generated clients, docs/OPENAPI.md's example, and each documented error's code and status read as literal types (none reduced to never)`,
  () => {
    const files = ["orval8-errors.ts", "orval7-errors.ts", "hey-api-errors.ts"].map((f) =>
      readFileSync(join(dir, "src", f), "utf8"),
    );
    assert.ok(answers.length >= 17, `${answers.length} error answers (listPets 4, createPet 8, getPet 5)`);
    for (const text of files) assert.is((text.match(/@ts-expect-error/g) ?? []).length, answers.length);
    try {
      run(process.execPath, [join(MODULES, "typescript", "bin", "tsc"), "-p", "tsconfig.json"], dir, 180_000);
    } catch (error) {
      assert.unreachable(String((error as Error).message).slice(0, 4000));
    }
  },
);

for (const [name, program] of [
  ["orval 8", "orval8-pages.ts"],
  ["orval 7", "orval7-pages.ts"],
  ["@hey-api/openapi-ts", "hey-api-pages.ts"],
]) {
  check(
    `${name}'s client walks every page with nextCursor(answer) and reads code and status of real error answers`,
    () => {
      const tsx = pathToFileURL(join(MODULES, "tsx", "dist", "loader.mjs")).href;
      const output = runNode(["--import", tsx, join("src", program as string)], 60_000);
      const walk = JSON.parse(output.trim().split("\n").pop() ?? "{}") as Walk;
      assert.equal(
        walk.ids,
        Array.from({ length: 45 }, (_, i) => i + 1),
        "every pet once, in order",
      );
      assert.is(walk.pages, 5);
      assert.equal(walk.errors, [
        [404, "pet_not_found", 404],
        [400, "invalid_query", 400],
        [401, "unauthorized", 401],
      ]);
      assert.is(walk.created, 46);
    },
  );
}

test.run();
