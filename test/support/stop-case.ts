/**
 * One way of stopping the standalone server, tried for real: the server (from the checkout, by
 * `npm start` or by the packed bin) leads a process group of its own on a fresh SQLite file, a POST
 * whose body arrives slowly is in flight, then the case's signals; its answer, the stored pet, the
 * exit code, the log lines and the processes left behind are checked.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as assert from "uvu/assert";
import type { Pet } from "../../lib/entries/schemas.ts";
import { openStorage } from "../../lib/index.ts";
import type { Program } from "./program.ts";
import { jsonLines } from "./server-child.ts";

export const STOP_KEY = "stop-case-key";

/** The processes of a running server: the group's leader (npm, or the server), the primary, its workers. */
export interface Processes {
  leader: number;
  primary: number;
  workers: number[];
}

export interface StopCase {
  name: string;
  /** Sends the signals of the stop. */
  send(processes: Processes): unknown;
  /** Sends a deliberate second request, past the window: the server exits at once. */
  again?(processes: Processes): unknown;
}

/** Starts the server with `env` added, as the leader of a new process group; stdout and stderr kept. */
export type Launch = (env: Record<string, string>) => Program;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for `promise`, at most `ms` (the timer is cleared: it never keeps the test process alive). */
async function atMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** The pids of the children of `pid` (Linux: /proc). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The server under `leader`: down the line of only children to the primary, whose children are the workers. */
function serverProcesses(leader: number, workers: number): Processes {
  let primary = leader;
  for (let depth = 0; depth < 5; depth++) {
    const children = childrenOf(primary);
    if (workers > 1 && children.length === workers) return { leader, primary, workers: children };
    if (children.length !== 1) break;
    primary = children[0] as number;
  }
  if (workers > 1) throw new Error(`no process under ${leader} with ${workers} children`);
  return { leader, primary, workers: [] };
}

/** The processes of group `group` still running (zombies are not), from /proc. */
function groupMembers(group: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pgrp) === group && state !== "Z") members.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

/** Waits until no process of the group runs (at most `ms`); the pids still running then. */
async function leftRunning(group: number, ms = 5000): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const members = groupMembers(group);
    if (members.length === 0 || Date.now() > deadline) return members;
    await sleep(50);
  }
}

/** A POST of a pet named `name` whose headers are read (the server said `100 Continue`) and whose body is half sent. */
async function slowPost(port: number, name: string) {
  const body = JSON.stringify({ name, categoryId: 1 });
  const socket = net.connect(port, "127.0.0.1");
  let text = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => {
    text += chunk;
  });
  socket.on("error", () => {}); // a reset shows as an answer missing below
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.write(
    `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${STOP_KEY}\r\nConnection: close\r\n` +
      `Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  for (let i = 0; i < 200 && !text.includes("100 Continue"); i++) await sleep(50);
  assert.match(text, /^HTTP\/1\.1 100 Continue\r\n/, "the server read the request's headers");
  socket.write(body.slice(0, 10));
  /** The final answer once the rest of the body is sent (the server closes the connection), within `ms`. */
  const answer = async (ms = 15_000): Promise<string> => {
    socket.write(body.slice(10)); // not end(): a client that half-closes is taken as gone
    await atMost(closed, ms);
    socket.destroy();
    return text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, "");
  };
  return { answer, closed };
}

/** Waits until each of `pids` logged `msg` (at most `ms`). */
async function logged(program: Program, msg: string, pids: number[], ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  const missing = () => pids.filter((pid) => !jsonLines(program.stdout()).some((l) => l.msg === msg && l.pid === pid));
  while (missing().length > 0 && Date.now() < deadline) await sleep(25);
  assert.equal(missing(), [], `"${msg}" logged by every process\n${program.stdout()}\n${program.stderr()}`);
}

/** How many of the JSON log lines of `pid` say `msg`. */
const countOf = (lines: Record<string, unknown>[], msg: string, pid: number) =>
  lines.filter((l) => l.msg === msg && l.pid === pid).length;

/** No log line is written twice (each carries its time and pid: two equal lines are one written twice). */
function assertNoRepeat(stdout: string): void {
  const seen = new Set<string>();
  for (const line of stdout.split("\n").filter((l) => l.startsWith("{"))) {
    assert.not.ok(seen.has(line), `a line written twice: ${line}`);
    seen.add(line);
  }
}

/**
 * Runs `stopCase` on a server started by `launch` with `workers` processes, and checks it: a
 * graceful stop (201, the pet stored, exit 0, "shutting down" and "stopped" once per process) or,
 * with `again`, a forced one (no answer, a nonzero exit at once, nothing left running).
 */
export async function runStopCase(launch: Launch, workers: number, stopCase: StopCase): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "petstore-stop-"));
  const spec = `sqlite:${join(dir, "pets.db")}`;
  const program = launch({
    PORT: "0",
    PETSTORE_API_KEYS: STOP_KEY,
    PETSTORE_STORAGE: spec,
    ...(workers > 1 ? { PETSTORE_WORKERS: String(workers) } : {}),
  });
  const leader = program.child.pid as number;
  const closed = new Promise((resolve) => program.child.once("close", resolve)); // its output read to the end
  try {
    const line = await program.line(/listening on http:\/\//, 120_000);
    const port = Number(/:(\d+)\/v1 /.exec(line)?.[1]);
    const processes = serverProcesses(leader, workers);
    const servers = [processes.primary, ...processes.workers];
    const post = await slowPost(port, stopCase.name);
    await stopCase.send(processes);
    await logged(program, "shutting down", servers);
    if (stopCase.again !== undefined) {
      await sleep(1200); // past the window, counted from the first signal's "shutting down"
      const sent = Date.now();
      stopCase.again(processes);
      const code = await program.exited(10_000);
      assert.ok(Date.now() - sent < 5000, `exited at once (${Date.now() - sent} ms)`);
      assert.ok(code !== 0, `a forced exit is not 0 (${code})`);
      assert.not.match(await post.answer(2000), /201 Created/, "the request in flight got no answer");
      const lines = jsonLines(program.stdout());
      assert.is(countOf(lines, "second signal: exiting now", processes.primary), 1, program.stdout());
      for (const pid of servers) assert.is(countOf(lines, "shutting down", pid), 1, `pid ${pid}: "shutting down" once`);
      for (const pid of servers) assert.ok(countOf(lines, "stopped", pid) <= 1, `pid ${pid}: "stopped" at most once`);
    } else {
      const answer = await post.answer();
      assert.match(answer, /^HTTP\/1\.1 201 /, `${answer}\n${program.stdout()}`);
      const pet = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as Pet;
      assert.is(await program.exited(20_000), 0, program.stderr());
      const lines = jsonLines(program.stdout());
      for (const pid of servers) {
        assert.is(countOf(lines, "shutting down", pid), 1, `pid ${pid}: "shutting down" once\n${program.stdout()}`);
        assert.is(countOf(lines, "stopped", pid), 1, `pid ${pid}: "stopped" once\n${program.stdout()}`);
      }
      assert.not.ok(
        lines.some((l) => l.msg === "second signal: exiting now"),
        program.stdout(),
      );
      const storage = await openStorage(spec);
      try {
        assert.equal(await storage.get(pet.id), pet, "the pet answered 201 is stored");
      } finally {
        await storage.close();
      }
    }
    assertNoRepeat(program.stdout());
    assert.equal(await leftRunning(leader), [], "nothing of the server left running");
  } catch (error) {
    const { message, actual, expects } = error as Error & { actual?: unknown; expects?: unknown };
    const values =
      actual === undefined ? "" : ` (actual ${JSON.stringify(actual)}, expected ${JSON.stringify(expects)})`;
    const output = `--- stdout:\n${program.stdout()}\n--- stderr:\n${program.stderr()}`;
    (error as Error).message =
      `${stopCase.name} (${workers} process${workers > 1 ? "es" : ""}): ${message}${values}\n${output}`;
    throw error;
  } finally {
    try {
      process.kill(-leader, "SIGKILL");
    } catch {
      // the group is gone
    }
    await program.kill();
    await atMost(closed, 2000);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the cases side by side and fails with every failure's message, not only the first. */
export async function runStopCases(cases: [Launch, number, StopCase][]): Promise<void> {
  const results = await Promise.allSettled(
    cases.map(([launch, workers, stopCase]) => runStopCase(launch, workers, stopCase)),
  );
  const failures = results.flatMap((r) => (r.status === "rejected" ? [(r.reason as Error).message] : []));
  assert.equal(failures, [], failures.join("\n\n"));
}
