/**
 * The package as users get it, for tests that run code in a fresh project: a copy of the
 * repository is built and packed once per test process (`npm pack`), and each `consumer()` is a new
 * temporary project with the tarball and the packages asked for installed (from the npm cache
 * where possible). Nothing touches the repository's own dist/ or node_modules/.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./program.ts";
import { packedPackage, run } from "./tarball.ts";

export { ROOT } from "./program.ts";
export { run } from "./tarball.ts";

/** The version of a package installed in the repository (so that a consumer gets the tested one). */
export const versionOf = (pkg: string): string =>
  JSON.parse(readFileSync(join(ROOT, "node_modules", pkg, "package.json"), "utf8")).version;

const temporary: string[] = [];

/** Packs a copy of the repository (which builds it), once per process; returns the tarball's path. */
function tarball(): string {
  return packedPackage().tarball; // one pack per process, shared with the suites that use ./tarball.ts
}

/**
 * `npm install` of `args` in `dir`: from the npm cache alone when it holds everything, else from
 * the registry for what it lacks. An ERESOLVE is npm refusing, not a package missing: thrown as is.
 */
export function installInto(dir: string, args: string[], ms: number): void {
  const install = (mode: string) =>
    run("npm", ["install", mode, "--no-package-lock", "--loglevel=error", ...args], dir, ms);
  try {
    install("--offline");
  } catch (error) {
    if (/ERESOLVE/.test(String(error))) throw error;
    install("--prefer-offline");
  }
}

/** The repository's sqlite3 addon (Node-API: one build loads on every Node.js). */
const SQLITE_ADDON = join(ROOT, "node_modules/sqlite3/build/Release/node_sqlite3.node");

/**
 * Puts the repository's built sqlite3 addon into every sqlite3 package under `modules` (a project
 * installed with --ignore-scripts): compiling it again takes 90 s to 3 min here and proves nothing more.
 */
export function placeSqliteAddon(modules: string): void {
  if (!existsSync(modules)) return;
  for (const name of readdirSync(modules)) {
    if (name.startsWith(".")) continue;
    const path = join(modules, name);
    if (name.startsWith("@")) {
      placeSqliteAddon(path);
      continue;
    }
    if (name === "sqlite3") {
      mkdirSync(join(path, "build/Release"), { recursive: true });
      cpSync(SQLITE_ADDON, join(path, "build/Release/node_sqlite3.node"));
    }
    placeSqliteAddon(join(path, "node_modules"));
  }
}

/** A fresh project (`type: module`) with the packed library and `packages` (name@version) installed. */
export function consumer(packages: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "petstore-consumer-"));
  temporary.push(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  installInto(dir, [tarball(), ...packages], 180_000);
  mkdirSync(join(dir, "src"), { recursive: true });
  return dir;
}

let shared: string | undefined;

/**
 * One project per test process with both tarballs (what `npm install petstore-server` gives), plus
 * hapi and Node's types, for the suites that run the server's bin or import both packages. Install
 * scripts are skipped and the repository's built sqlite3 addon is placed in (`placeSqliteAddon`).
 */
export function serverProject(): string {
  if (shared !== undefined) return shared;
  const { tarball: library, serverTarball } = packedPackage();
  const dir = mkdtempSync(join(tmpdir(), "petstore-server-project-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "server-project", private: true, type: "module" }));
  const packages = [
    library,
    serverTarball,
    `@hapi/hapi@${versionOf("@hapi/hapi")}`,
    `@types/node@${versionOf("@types/node")}`,
  ];
  installInto(dir, ["--ignore-scripts", ...packages], 300_000);
  placeSqliteAddon(join(dir, "node_modules"));
  shared = dir;
  return dir;
}

/** Removes every temporary directory made so far. */
export function cleanUp(): void {
  for (const dir of temporary.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A program running in a consumer project. */
export interface Running {
  output(): string;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Starts `node file` in `dir` (environment: PATH and `env` only). */
export function startNode(dir: string, file: string, env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [file], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (s: string) => {
    out += s;
  });
  child.stderr.setEncoding("utf8").on("data", (s: string) => {
    out += s;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    output: () => out,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
    },
  };
}

/** Fetches `url` until it answers (the program is starting), for at most `ms`. */
export async function whenUp(url: string, init: RequestInit, running: Running, ms = 15_000): Promise<Response> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(5_000) });
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`${url} did not answer within ${ms} ms: ${error}\n${running.output()}`);
      const code = await Promise.race([running.exited, new Promise((r) => setTimeout(r, 100, "running"))]);
      if (code !== "running") throw new Error(`the program exited (${code}) before answering:\n${running.output()}`);
    }
  }
}
