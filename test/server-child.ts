/**
 * Runs the standalone server as a child process (`node --import tsx adapters/server.ts`, one
 * process, so signals reach it), for the server life tests. Everything is bounded: waits time
 * out, and `stop()` kills the child if a test failed half-way.
 */
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface Child {
  process: ChildProcess;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line matching `pattern` (rejects after `ms`). */
  line(pattern: RegExp, ms?: number): Promise<string>;
  /** Resolves with the exit code once the child has exited (rejects after `ms`). */
  exited(ms?: number): Promise<number | null>;
  /** Kills the child if it still runs. */
  stop(): Promise<void>;
}

/** Starts the server with exactly `env` (plus PATH) and `args`. */
export function spawnServer(env: Record<string, string>, args: string[] = []): Child {
  const child = spawn(process.execPath, ["--import", "tsx", "adapters/server.ts", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (s: string) => {
    out += s;
  });
  child.stderr?.setEncoding("utf8").on("data", (s: string) => {
    err += s;
  });
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const timeout = <T>(promise: Promise<T>, ms: number, what: string) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms; stdout: ${out} stderr: ${err}`)), ms);
      promise.then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (e) => {
          clearTimeout(timer);
          reject(e);
        },
      );
    });

  return {
    process: child,
    stdout: () => out,
    stderr: () => err,
    line(pattern, ms = 15_000) {
      const found = () => out.split("\n").find((l) => pattern.test(l));
      return timeout(
        new Promise<string>((resolve, reject) => {
          const check = () => {
            const hit = found();
            if (hit !== undefined) {
              child.stdout?.off("data", check);
              resolve(hit);
            } else if (child.exitCode !== null) reject(new Error(`exited with ${child.exitCode}`));
          };
          child.stdout?.on("data", check);
          child.once("exit", () => setImmediate(check));
          check();
        }),
        ms,
        `no line matching ${pattern}`,
      );
    },
    exited: (ms = 15_000) => timeout(exit, ms, "no exit"),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exit;
      }
    },
  };
}

/** The base URL from the start-up line, e.g. "http://127.0.0.1:40123/v1". */
export async function startedUrl(child: Child): Promise<URL> {
  const line = await child.line(/listening on http:\/\//);
  const match = /http:\/\/\S+/.exec(line);
  if (!match) throw new Error(`no URL in ${line}`);
  return new URL(match[0]);
}

/** The JSON lines of stdout (request logs and the server's own messages). */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
}
