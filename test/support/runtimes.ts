/**
 * The other JavaScript runtimes the fetch adapter serves, from devDependencies (the `bun` and
 * `deno` npm packages carry each platform's binary as an optional dependency), and the rule when
 * one is missing: a loud "SKIPPED" line locally, a failure with CI=true.
 */
import type { ChildProcess } from "node:child_process";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ROOT } from "./program.ts";

export type Runtime = "bun" | "deno";

/** The command that runs a TypeScript file under `runtime`. */
export function runCommand(runtime: Runtime, file: string): string[] {
  const bin = join(ROOT, "node_modules", ".bin", runtime);
  return runtime === "bun" ? [bin, file] : [bin, "run", "--allow-all", "--quiet", file];
}

const found = new Map<Runtime, string | undefined>();

/** Why `runtime` cannot run here, or undefined when it runs (`<runtime> --version` answers). */
export function missingRuntime(runtime: Runtime): string | undefined {
  if (!found.has(runtime)) {
    const bin = join(ROOT, "node_modules", ".bin", runtime);
    let why: string | undefined;
    if (!existsSync(bin)) why = `${bin} does not exist (npm ci installs the ${runtime} devDependency)`;
    else {
      const run = spawnSync(bin, ["--version"], { encoding: "utf8", timeout: 30_000 });
      if (run.status !== 0)
        why = `${runtime} --version failed: ${(run.stderr || String(run.error)).trim().split("\n")[0]}`;
    }
    found.set(runtime, why);
  }
  return found.get(runtime);
}

const warned = new Set<string>();

/**
 * True when `runtime` can run. When not: prints SKIPPED (once per `what`) and returns false, or
 * with CI=true returns true, so that the tests run and fail on the missing runtime.
 */
export function runtimeAvailable(runtime: Runtime, what: string): boolean {
  const why = missingRuntime(runtime);
  if (why === undefined || process.env.CI === "true") return true;
  if (!warned.has(what)) {
    warned.add(what);
    console.log(`\n*** SKIPPED: ${what} on ${runtime}: ${why} (with CI=true this fails) ***\n`);
  }
  return false;
}

/** A program running under a runtime that talks one line at a time (see test/support/fetch-child.ts). */
export interface LineChild {
  child: ChildProcess;
  /** The port it printed in `listening <port>`. */
  port: number;
  /** Sends one command line; resolves on `ok`, rejects on `error …` or after 20 s. */
  command(line: string): Promise<void>;
  /** Asks it to exit (then kills it if it has not within 5 s). */
  stop(): Promise<void>;
  stderr(): string;
}

/** Starts `file` under `runtime` and waits (up to 60 s) for its `listening <port>` line. */
export function startChild(runtime: Runtime, file: string, env: Record<string, string> = {}): Promise<LineChild> {
  const why = missingRuntime(runtime);
  if (why !== undefined) return Promise.reject(new Error(`${runtime} cannot run: ${why}`));
  const [bin, ...args] = runCommand(runtime, file);
  const child = spawn(bin as string, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let err = "";
  child.stderr?.setEncoding("utf8").on("data", (s: string) => {
    err += s;
  });
  const waiting: Array<(line: string) => void> = [];
  const lines: string[] = [];
  let exited = false;
  const gone = () => {
    exited = true;
    for (const wake of waiting.splice(0)) wake(`error the ${runtime} program exited; stderr: ${err.slice(-2000)}`);
  };
  child.on("exit", gone);
  child.on("error", gone);
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    const wake = waiting.shift();
    if (wake) wake(line);
    else lines.push(line);
  });
  const next = (ms: number, what: string) =>
    new Promise<string>((resolve, reject) => {
      const line = lines.shift();
      if (line !== undefined) return resolve(line);
      if (exited) return reject(new Error(`the ${runtime} program exited; stderr: ${err.slice(-2000)}`));
      const timer = setTimeout(
        () => reject(new Error(`${what}: no answer from ${runtime} within ${ms} ms; stderr: ${err}`)),
        ms,
      );
      waiting.push((l) => {
        clearTimeout(timer);
        resolve(l);
      });
    });
  let queue = Promise.resolve();
  return next(60_000, "start").then((first) => {
    const port = Number(/^listening (\d+)$/.exec(first)?.[1]);
    if (!port) throw new Error(`${runtime} ${file} did not start: ${first}; stderr: ${err}`);
    const command = (line: string) => {
      const done = queue.then(async () => {
        child.stdin?.write(`${line}\n`);
        const answer = await next(20_000, line);
        if (answer !== "ok") throw new Error(`${runtime} child: ${line.slice(0, 60)}: ${answer}`);
      });
      queue = done.catch(() => {});
      return done;
    };
    return {
      child,
      port,
      command,
      stderr: () => err,
      async stop() {
        if (exited) return;
        const exit = new Promise((resolve) => child.once("exit", resolve));
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        child.stdin?.end("exit\n");
        await exit;
        clearTimeout(timer);
      },
    };
  });
}
