/**
 * Runs a program of the repository as a user would (`npx tsx <file>`, here `node --import tsx`):
 * an example, or the standalone server. A child process with bounded waits, whose output is kept.
 */
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface Program {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line matching `pattern`; rejects after `ms` or when the program exits first. */
  line(pattern: RegExp, ms?: number): Promise<string>;
  /** Resolves with the exit code; rejects after `ms`. */
  exited(ms?: number): Promise<number | null>;
  /** Kills the program if it still runs (cleanup after a failed test). */
  kill(): Promise<void>;
}

/**
 * Starts `node --import tsx <args>` in the repository with `env` added to the current environment
 * (or, with `inheritEnv: false`, with exactly `env`). With `command`, runs that executable with
 * `args` instead (e.g. `npm` with `["start"]`); `cwd` runs it elsewhere, `detached` makes it the
 * leader of a process group of its own (as a terminal's job is).
 */
export function startProgram(
  args: string[],
  env: Record<string, string> = {},
  options: { inheritEnv?: boolean; command?: string; cwd?: string; detached?: boolean } = {},
): Program {
  const [file, argv] = options.command ? [options.command, args] : [process.execPath, ["--import", "tsx", ...args]];
  const child = spawn(file, argv, {
    cwd: options.cwd ?? ROOT,
    detached: options.detached ?? false,
    env: options.inheritEnv === false ? env : { ...process.env, ...env },
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
  const within = <T>(ms: number, what: string, wait: (done: (value: T) => void, fail: (e: Error) => void) => void) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${what} within ${ms} ms\n--- stdout:\n${out}\n--- stderr:\n${err}`)),
        ms,
      );
      wait(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });

  return {
    child,
    stdout: () => out,
    stderr: () => err,
    line(pattern, ms = 30_000) {
      return within<string>(ms, `no line matching ${pattern}`, (done, fail) => {
        const check = () => {
          const hit = out.split("\n").find((l) => pattern.test(l));
          if (hit !== undefined) {
            child.stdout?.off("data", check);
            done(hit);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            fail(new Error(`exited (${child.exitCode}) before a line matching ${pattern}\n${out}\n${err}`));
          }
        };
        child.stdout?.on("data", check);
        child.once("exit", () => setImmediate(check));
        check();
      });
    },
    exited(ms = 60_000) {
      return within<number | null>(ms, "the program did not exit", (done) => void exit.then(done));
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exit;
      }
    },
  };
}

/** Runs a program to its end (60 s at most) and returns its exit code and output. */
export async function runProgram(args: string[], env: Record<string, string> = {}, ms = 60_000) {
  const program = startProgram(args, env);
  try {
    const code = await program.exited(ms);
    return { code, stdout: program.stdout(), stderr: program.stderr() };
  } finally {
    await program.kill();
  }
}

/** The line of `output` that starts with `label` (after trimming), or a failure naming it. */
export function lineOf(output: string, label: string): string {
  const line = output.split("\n").find((l) => l.trimStart().startsWith(label));
  if (line === undefined) throw new Error(`no line starting with ${JSON.stringify(label)} in:\n${output}`);
  return line;
}

/** The status and body a demo printed for `label` (lines look like `label -> 200 {"id":1}`). */
export function answerOf(output: string, label: string): { status: number; rest: string } {
  const line = lineOf(output, `${label} `);
  const match = / -> (\d{3}) (.*)$/.exec(line);
  if (match === null) throw new Error(`no " -> <status> " in ${JSON.stringify(line)}`);
  return { status: Number(match[1]), rest: match[2] ?? "" };
}
