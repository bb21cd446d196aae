/**
 * Runs the standalone server as a child process (`node --import tsx server/cli.ts`, one
 * process, so signals reach it), for the server life tests. Everything is bounded: waits time
 * out, and `stop()` kills the child if a test failed half-way.
 */
import type { ChildProcess } from "node:child_process";
import { startProgram } from "./program.ts";

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
  const program = startProgram(
    ["server/cli.ts", ...args],
    { PATH: process.env.PATH ?? "", ...env },
    {
      inheritEnv: false,
    },
  );
  return {
    process: program.child,
    stdout: program.stdout,
    stderr: program.stderr,
    line: (pattern, ms = 15_000) => program.line(pattern, ms),
    exited: (ms = 15_000) => program.exited(ms),
    stop: program.kill,
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
