/**
 * The packed package on the other runtimes: a copy of the repository is built and packed, the
 * tarball installed into an empty project (from the npm cache where possible), and the README's
 * "Fetch runtimes" code block run there as a user would: under Bun, under Deno (with the
 * permissions the README names), and as a Worker bundled with esbuild and run by workerd
 * (Miniflare). One request each. Only the port is changed (a free one instead of 8080).
 */
import type { SpawnSyncReturns } from "node:child_process";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "../support/program.ts";
import type { Runtime } from "../support/runtimes.ts";
import { missingRuntime, runtimeAvailable } from "../support/runtimes.ts";
import { COMPATIBILITY, startWorker } from "../support/worker.ts";

const TMP = mkdtempSync(join(tmpdir(), "petstore-fetch-pack-"));
const SOURCE = join(TMP, "source");
const CONSUMER = join(TMP, "consumer");
const KEY = "fetch-pack-key-0123456789";

/** npm without the npm_* variables of an outer `npm test`, with the same cache. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) || name === "npm_config_cache") env[name] = value;
  }
  return { ...env, npm_config_fund: "false", npm_config_audit: "false", npm_config_update_notifier: "false" };
}

function run(command: string, args: string[], cwd: string, ms = 90_000): string {
  const result: SpawnSyncReturns<string> = spawnSync(command, args, {
    cwd,
    env: npmEnv(),
    encoding: "utf8",
    timeout: ms,
  });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(" ")} failed (${result.error?.message ?? `exit ${result.status}`})\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/** The README's Fetch runtimes block: the lines every runtime shares, and each runtime's own line. */
function readmeBlock() {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Fetch runtimes"));
  const code = /```ts\n([\s\S]*?)\n```/.exec(section)?.[1] ?? "";
  const [shared = "", ends = ""] = code.split("\n\n");
  const line = (marker: string) => ends.split("\n").find((l) => l.includes(marker)) ?? "";
  return { shared, bun: line("// Bun"), deno: line("// Deno"), worker: line("// Cloudflare Worker") };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** GET /v1/pets with the key until it answers (the program is starting), 30 s at most. */
async function firstAnswer(base: string): Promise<{ status: number; body: string }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`${base}/v1/pets`, { headers: { authorization: `Bearer ${KEY}` } });
      return { status: res.status, body: await res.text() };
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const block = readmeBlock();

test.before(() => {
  const skip = new Set(["node_modules", ".git", "dist", ".tmp", "coverage"]);
  cpSync(ROOT, SOURCE, {
    recursive: true,
    filter: (path) =>
      !skip.has(
        path
          .slice(ROOT.length)
          .replace(/^[/\\]/, "")
          .split(/[/\\]/)[0] ?? "",
      ),
  });
  symlinkSync(join(ROOT, "node_modules"), join(SOURCE, "node_modules"), "dir");
  run("npm", ["run", "build"], SOURCE);
  const tarball = join(TMP, JSON.parse(run("npm", ["pack", "--json", "--pack-destination", TMP], SOURCE))[0].filename);
  mkdirSync(CONSUMER);
  writeFileSync(
    join(CONSUMER, "package.json"),
    JSON.stringify({ name: "fetch-consumer", private: true, type: "module" }),
  );
  const install = (mode: string) =>
    run("npm", ["install", mode, "--no-package-lock", "--loglevel=error", tarball], CONSUMER);
  try {
    install("--offline");
  } catch {
    install("--prefer-offline");
  }
});

test.after(() => {
  rmSync(TMP, { recursive: true, force: true });
});

test("package: the README's Fetch runtimes block is under 15 lines of user code for each runtime", () => {
  assert.match(block.shared, /from "petstore-lib"/);
  assert.match(block.shared, /from "petstore-lib\/fetch"/);
  for (const own of [block.bun, block.deno, block.worker]) {
    assert.ok(own !== "", "each runtime has its line");
    assert.ok(`${block.shared}\n${own}`.split("\n").length < 15);
  }
});

const COMMANDS: Record<Runtime, (bin: string) => string[]> = {
  bun: (bin) => [bin, "server.ts"],
  // The README's command: deno run --allow-net --allow-env server.ts
  deno: (bin) => [bin, "run", "--allow-net", "--allow-env", "server.ts"],
};

for (const runtime of ["bun", "deno"] as const) {
  if (!runtimeAvailable(runtime, "the packed package")) continue;
  test(`package: the README's ${runtime === "bun" ? "Bun.serve" : "Deno.serve"} code serves the API from the installed tarball`, async () => {
    const why = missingRuntime(runtime);
    if (why !== undefined) throw new Error(`${runtime} cannot run: ${why}`); // only with CI=true: else skipped
    const port = await freePort();
    writeFileSync(join(CONSUMER, "server.ts"), `${block.shared}\n${block[runtime].replace("8080", String(port))}\n`);
    const [bin, ...args] = COMMANDS[runtime](join(ROOT, "node_modules", ".bin", runtime));
    const child = spawn(bin as string, args, {
      cwd: CONSUMER,
      env: { ...process.env, PETSTORE_API_KEY: KEY },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (s: string) => {
      stderr += s;
    });
    try {
      const answer = await firstAnswer(`http://127.0.0.1:${port}`);
      assert.equal(answer, { status: 200, body: "[]" }, stderr);
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  });
}

test("package: the README's Worker code, bundled from the installed tarball, serves the API in workerd", async () => {
  writeFileSync(join(CONSUMER, "worker.ts"), `${block.shared}\n${block.worker}\n`);
  const result = await build({
    absWorkingDir: CONSUMER,
    entryPoints: ["worker.ts"],
    bundle: true,
    minify: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "import"],
    mainFields: ["module", "main"],
    external: ["node:*", "buffer", "crypto"],
    write: false,
    logLevel: "silent",
  });
  const { url, mf } = await startWorker(result.outputFiles[0]?.text ?? "", {
    ...COMPATIBILITY,
    bindings: { PETSTORE_API_KEY: KEY },
  });
  try {
    assert.equal(await firstAnswer(url.origin), { status: 200, body: "[]" });
  } finally {
    await mf.dispose();
  }
});

test.run();
