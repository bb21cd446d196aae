/**
 * Child processes for the bench: every server under test, every baseline and every in-process
 * scenario runs in its own Node process (with tsx), so that autocannon and the runner never share
 * a thread with what they measure, and a crash or a hang is one failed row, not a dead run.
 * Children talk to their parent over IPC and die with it.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

/** A message a bench child sends to its parent. */
export type ChildMessage =
  | { type: "ready"; port: number }
  | { type: "result"; rows: import("./report.ts").Row[] }
  | { type: "reply"; value: unknown };

export interface StartOptions {
  /** Extra Node flags, e.g. ["--expose-gc"] or ["--cpu-prof"]. */
  nodeFlags?: string[];
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Pass the child's stdout through (default: discarded, a server's request log goes nowhere). */
  showStdout?: boolean;
  /** What runs the child instead of this Node (bench/callgrind.ts: this Node under callgrind). */
  execPath?: string;
}

/** The children's tsconfig: no `paths`, so "petstore-lib" is the compiled package (see the file). */
const CHILD_TSCONFIG = fileURLToPath(new URL("tsconfig.children.json", import.meta.url));

/** Starts `bench/<file>` in a child Node process with tsx. */
export function start(file: string, args: string[] = [], options: StartOptions = {}): ChildProcess {
  const path = fileURLToPath(new URL(file, import.meta.url));
  const child = fork(path, args, {
    ...(options.execPath === undefined ? {} : { execPath: options.execPath }),
    execArgv: [...(options.nodeFlags ?? []), "--import", "tsx"],
    env: { ...process.env, TSX_TSCONFIG_PATH: CHILD_TSCONFIG, ...options.env },
    stdio: ["ignore", options.showStdout ? "inherit" : "ignore", "inherit", "ipc"],
  });
  // A message to a child that is just leaving fails with EPIPE: that child is stopping anyway.
  child.on("error", () => {});
  return child;
}

/** The next message of `type` from the child; rejects when it exits or `timeoutMs` passes first. */
export function waitFor<T extends ChildMessage["type"]>(
  child: ChildProcess,
  type: T,
  timeoutMs: number,
): Promise<Extract<ChildMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no "${type}" message within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (message: ChildMessage) => {
      if (message?.type !== type) return;
      done();
      resolve(message as Extract<ChildMessage, { type: T }>);
    };
    const onExit = (code: number | null, signal: string | null) => {
      done();
      reject(new Error(`child exited (${signal ?? `code ${code}`}) before sending "${type}"`));
    };
    function done() {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
    }
    child.on("message", onMessage);
    child.on("exit", onExit);
  });
}

/** The CPU time (µs) a child started with exitWithParent() has used so far. */
export async function cpuOf(child: ChildProcess): Promise<number> {
  const reply = waitFor(child, "reply", 10_000);
  child.send({ type: "cpu" });
  return (await reply).value as number;
}

/** Asks a child to stop (it exits by itself, writing any --cpu-prof profile); kills it after `graceMs`. */
export async function stop(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (child.connected) child.send({ type: "stop" }, (error) => error && child.kill("SIGTERM"));
  else child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), graceMs);
  });
  if ((await Promise.race([exited, late])) === "late") {
    child.kill("SIGKILL");
    await exited;
  }
  clearTimeout(timer);
}

/**
 * In a child: sends a message to the parent. Without a parent (the program was run by hand),
 * prints it instead.
 */
export function tellParent(message: ChildMessage): void {
  if (process.send) process.send(message);
  else console.log(JSON.stringify(message, null, 2));
}

/** In a child program: hands its rows to the parent and lets go of it, so the process can end. */
export function finish(rows: import("./report.ts").Row[]): void {
  if (process.send) process.send({ type: "result", rows } satisfies ChildMessage, () => process.disconnect());
  else console.log(JSON.stringify(rows, null, 2));
}

/**
 * In a child program: when interrupted before it finished (SIGINT, SIGTERM, or the runner's
 * "stop" after a time-out), runs `cleanup` (removing what it wrote to Redis, Postgres, files)
 * and exits 1.
 */
/** A function that runs `cleanup` once, then exits with `code`, however often it is called. */
function leaveOnce(cleanup: () => Promise<void> | void, code: number): () => Promise<void> {
  let leaving = false;
  return async () => {
    if (leaving) return;
    leaving = true;
    try {
      await cleanup();
    } finally {
      process.exit(code);
    }
  };
}

export function cleanupOnInterrupt(cleanup: () => Promise<void>): void {
  const leave = leaveOnce(cleanup, 1);
  process.once("SIGINT", () => void leave());
  process.once("SIGTERM", () => void leave());
  process.on("message", (message: { type?: string }) => {
    if (message?.type === "stop") void leave();
  });
}

/**
 * In a child: runs `cleanup` then exits when the parent says stop or goes away; answers the
 * parent's "cpu" questions meanwhile.
 */
export function exitWithParent(cleanup: () => Promise<void> | void = () => {}): void {
  const leave = leaveOnce(cleanup, 0);
  process.on("message", (message: { type?: string }) => {
    if (message?.type === "stop") void leave();
    // CPU time used so far (µs, user + system): less sensitive to a busy machine than req/s.
    if (message?.type === "cpu") {
      const { user, system } = process.cpuUsage();
      tellParent({ type: "reply", value: user + system });
    }
  });
  process.on("disconnect", () => void leave());
  process.on("SIGTERM", () => void leave());
}
