/**
 * Bench servers run by Bun or Deno instead of Node (F1, F3): the runtime from the devDependencies,
 * the child's "ready" message as one JSON line on its stdout, its CPU time from /proc (Linux; NaN
 * elsewhere). The child stops on SIGTERM or when its stdin closes.
 */
import { type ChildProcess, execSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export type Runtime = "bun" | "deno";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The runtime's binary, or undefined when the devDependency is not installed here. */
export function runtimeBinary(runtime: Runtime): string | undefined {
  const bin = `${ROOT}node_modules/.bin/${runtime}`;
  return existsSync(bin) ? bin : undefined;
}

export interface RuntimeChild {
  child: ChildProcess;
  port: number;
  /** CPU time used so far, µs (user + system). */
  cpu(): number;
  stop(): Promise<void>;
}

let ticks: number | undefined;

/** Starts `bench/<file>` under `runtime` and waits (up to `timeoutMs`) for its ready line. */
export async function startRuntime(
  runtime: Runtime,
  file: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<RuntimeChild> {
  const bin = runtimeBinary(runtime);
  if (bin === undefined) throw new Error(`${runtime} is not installed (npm ci installs the ${runtime} devDependency)`);
  const path = fileURLToPath(new URL(file, import.meta.url));
  const argv = runtime === "bun" ? [path, ...args] : ["run", "--allow-all", "--quiet", path, ...args];
  const child = spawn(bin, argv, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "inherit"] });
  child.on("error", () => {});
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${runtime} ${file}: no ready line within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${runtime} ${file} exited (${code}) before it was ready`));
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      try {
        const message = JSON.parse(line) as { type?: string; port?: number };
        if (message.type === "ready") {
          clearTimeout(timer);
          resolve(Number(message.port));
        }
      } catch {}
    });
  });
  return {
    child,
    port,
    cpu() {
      try {
        ticks ??= Number(execSync("getconf CLK_TCK", { encoding: "utf8" }).trim()) || 100;
        // /proc/<pid>/stat: fields 14 and 15 (utime, stime) in clock ticks, after "(comm)".
        const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
        return ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticks;
      } catch {
        return Number.NaN;
      }
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
