/**
 * The README's code works. Every fenced block right after `<!-- runnable -->` is run: TypeScript
 * with tsx (imports of `petstore-lib` and its subpaths pointed at this checkout's sources), shell
 * with bash in the repository; each must exit 0 within its time. A block after
 * `<!-- runnable: serves -->` starts a server: it must print the API's URL (…/v1) with PORT=0,
 * answer `GET <url>/pets` there (401 without a key), and stop on SIGTERM.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type ReadmeBlock, readmeBlocks } from "../support/readme.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const PKG = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const RUN_MS = 90_000;
// `npm start` compiles with tsc first: 5 s of CPU, 25 s and more of wall time on a loaded 2-core machine.
const START_MS = 120_000;

type Block = ReadmeBlock;

/** `petstore-lib[/sub]` → the source file in this checkout that package.json's export compiles from. */
function sourceOf(specifier: string): string | undefined {
  const key = specifier === "petstore-lib" ? "." : `.${specifier.slice("petstore-lib".length)}`;
  const target = PKG.exports?.[key];
  const file = typeof target === "string" ? target : target?.default;
  if (typeof file !== "string") return undefined;
  const source = file.replace(/^\.\/dist\/(.*)\.js$/, "./$1.ts");
  return join(ROOT, source);
}

const IMPORT = /(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(["'])(petstore-lib(?:\/[^"']*)?)\2/g;

function localImports(code: string): string {
  return code.replace(IMPORT, (_all, lead: string, quote: string, specifier: string) => {
    const file = sourceOf(specifier);
    if (file === undefined) throw new Error(`"${specifier}" is not an export of package.json`);
    return `${lead}${quote}${file}${quote}`;
  });
}

// TypeScript blocks run from a scratch folder that sees the repository's node_modules.
const SCRATCH = mkdtempSync(join(tmpdir(), "petstore-readme-"));
mkdirSync(join(SCRATCH, "blocks"));
symlinkSync(join(ROOT, "node_modules"), join(SCRATCH, "node_modules"), "dir");
writeFileSync(join(SCRATCH, "package.json"), '{ "type": "module" }\n');
test.after(() => rmSync(SCRATCH, { recursive: true, force: true }));

/** Starts a block in its own process group (so that a stop reaches npm's children too). */
function start(block: Block) {
  const env = { ...process.env, PORT: "0", NO_COLOR: "1" };
  let child: ReturnType<typeof spawn>;
  if (block.lang === "ts") {
    const file = join(SCRATCH, "blocks", `line-${block.line}.ts`);
    writeFileSync(file, localImports(block.code));
    child = spawn(process.execPath, ["--import", "tsx", file], { cwd: SCRATCH, env, detached: true });
  } else if (block.lang === "sh") {
    child = spawn("bash", ["-e", "-o", "pipefail", "-c", block.code], { cwd: ROOT, env, detached: true });
  } else {
    throw new Error(`README: a runnable block at line ${block.line} must be ts or sh, not "${block.lang}"`);
  }
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (s: string) => {
    output += s;
  });
  child.stderr?.setEncoding("utf8").on("data", (s: string) => {
    output += s;
  });
  // uvu's summary lines are disguised in messages, so that CI's tally counts only this suite's.
  const shown = () => output.replace(/^(\s*)(Total|Passed|Skipped):/gm, "$1$2 =");
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), name);
    } catch {
      // the group is gone already
    }
  };
  const within = <T>(promise: Promise<T>, ms: number, what: string) =>
    Promise.race([
      promise,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`${what} within ${ms} ms; output:\n${shown()}`)), ms).unref(),
      ),
    ]);
  return { child, exited, signal, within, output: shown };
}

const all = readmeBlocks(README);
const runnable = all.filter((b) => b.mode !== undefined);

test("README: it marks its quick starts as runnable (at least one block per use)", () => {
  assert.ok(runnable.length >= 6, `found ${runnable.length} runnable blocks`);
  assert.ok(
    runnable.some((b) => b.code.includes("petstore-lib/hapi")),
    "the hapi quick start",
  );
  assert.ok(
    runnable.some((b) => b.code.includes("petstore-lib/node-http")),
    "the Node http quick start",
  );
  assert.ok(
    runnable.some((b) => b.code.includes('from "uvu"')),
    "the unit-testing quick start",
  );
});

test("README: petstore-lib is not on the npm registry yet: no command installs it by name, the Quick start installs the packed tarball", () => {
  assert.match(README, /is not on the npm\s+registry yet/);
  assert.not.match(README, /npm (install|i)\b[^\n]*\spetstore-(lib|server)(\s|$)/);
  assert.match(README, /^npm install "\$PETSTORE_LIB\/petstore-lib-\d+\.\d+\.\d+\.tgz"/m);
});

test("README: flags to npm start go after -- (npm start --port 9090 gives the port to npm, not the server)", () => {
  assert.match(README, /`npm start -- --port \d+`/);
  assert.not.match(README, /npm start --(?!-)\w/);
});

test("README: it stays short (under 400 lines; reference material lives in docs/)", () => {
  const lines = README.split("\n").length;
  assert.ok(lines < 400, `README.md has ${lines} lines`);
});

test("README: each of the three uses has a Quick start for a new project (set-up, a file, a run command)", () => {
  const quick = all.filter((b) => b.quickstart !== undefined);
  assert.ok(
    quick.some((b) => b.quickstart?.use === "all" && b.quickstart.role === "setup"),
    "the common set-up commands",
  );
  for (const use of ["hapi", "node-http", "unit-testing"]) {
    const mine = quick.filter((b) => b.quickstart?.use === use);
    assert.ok(
      mine.some((b) => b.lang === "ts"),
      `${use}: a file`,
    );
    assert.ok(
      mine.some((b) => b.quickstart?.role === "run"),
      `${use}: a run command`,
    );
  }
});

test("README: every import of petstore-lib in its code is an export of package.json", () => {
  for (const block of all.filter((b) => b.lang === "ts" || b.lang === "js")) {
    for (const match of block.code.matchAll(IMPORT)) {
      assert.ok(sourceOf(match[3] as string), `line ${block.line}: "${match[3]}" is exported by package.json`);
    }
  }
});

test("README: every `npm run <script>` it mentions exists in package.json", () => {
  const mentioned = new Set([...README.matchAll(/npm run ([a-z][\w:-]*)/g)].map((m) => m[1] as string));
  for (const script of mentioned) assert.ok(PKG.scripts?.[script], `npm run ${script} is a script of package.json`);
});

for (const block of runnable) {
  if (block.mode === "runs") {
    test(`README: the ${block.lang} block at line ${block.line} runs and exits 0`, async () => {
      const run = start(block);
      try {
        const code = await run.within(run.exited, RUN_MS, "the block did not finish");
        assert.is(code, 0, `exit code; output:\n${run.output()}`);
      } finally {
        run.signal("SIGKILL");
      }
    });
  } else {
    test(`README: the ${block.lang} block at line ${block.line} serves the API and stops on SIGTERM`, async () => {
      const run = start(block);
      try {
        const url = await run.within(
          new Promise<string>((resolve, reject) => {
            const look = () => {
              const found = /(http:\/\/127\.0\.0\.1:\d+\/v1)\b/.exec(run.output())?.[1];
              if (found !== undefined) resolve(found);
            };
            run.child.stdout?.on("data", look);
            void run.exited.then((code) => reject(new Error(`exited with ${code} before serving:\n${run.output()}`)));
          }),
          START_MS,
          "no http://127.0.0.1:<port>/v1 URL printed",
        );
        assert.not.match(url, /:0\//, "the real port is printed");
        const res = await fetch(`${url}/pets`);
        assert.is(res.status, 401, "the pet store answers at the printed URL");
        assert.is(((await res.json()) as { code: string }).code, "unauthorized");
        run.signal("SIGTERM");
        await run.within(run.exited, 15_000, "the block did not stop on SIGTERM");
      } finally {
        run.signal("SIGKILL");
      }
    });
  }
}

test.run();
