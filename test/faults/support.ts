/**
 * What the fault tests share: an own redis-server on a spare port (killed and restarted at will),
 * a small HTTP client that never hangs, a mixed load of reads and writes that keeps a ledger of
 * the pets acknowledged with 201, and the check that every one of them is still readable.
 */
import type { ChildProcess } from "node:child_process";
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const KEY = "fault-test-key-123456";

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}

/** A fresh temporary folder. */
export const tempDir = (prefix: string) => mkdtempSync(join(tmpdir(), `petstore-${prefix}-`));

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 100 ms until it is true; throws after `ms`. */
export async function waitUntil(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

export interface Reply {
  status: number;
  /** The Error body's code, when there is one. */
  code?: string;
  body: string;
  headers: Headers;
  ms: number;
}
export type Outcome = Reply | { status: "no answer"; error: string; ms: number };

/** One request with a hard bound: a hang becomes `{ status: "no answer" }` after `timeoutMs`. */
export async function call(
  url: string,
  init: { method?: string; body?: string; auth?: boolean; headers?: Record<string, string> } = {},
  timeoutMs = 4000,
): Promise<Outcome> {
  const started = performance.now();
  const headers: Record<string, string> = {};
  if (init.auth !== false) headers.authorization = `Bearer ${KEY}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  Object.assign(headers, init.headers);
  try {
    const res = await fetch(url, {
      method: init.method ?? "GET",
      headers,
      ...(init.body === undefined ? {} : { body: init.body }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await res.text();
    let code: string | undefined;
    if (res.status >= 400) {
      try {
        code = JSON.parse(body).code;
      } catch {}
    }
    return {
      status: res.status,
      ...(code === undefined ? {} : { code }),
      body,
      headers: res.headers,
      ms: performance.now() - started,
    };
  } catch (error) {
    return { status: "no answer", error: String((error as Error)?.cause ?? error), ms: performance.now() - started };
  }
}

export interface LoadResult {
  op: "create" | "list" | "get";
  startedAt: number;
  outcome: Outcome;
}

/**
 * A mixed load (creates, list pages, reads of acknowledged pets) from `workers` concurrent
 * clients until `stop()`. Every 201 goes into `acked`.
 */
export function mixedLoad(base: string, acked: Map<number, Pet>, workers = 12) {
  const results: LoadResult[] = [];
  let running = true;
  let n = 0;
  const worker = async (w: number) => {
    while (running) {
      const i = n++;
      const roll = (i * 7 + w) % 10;
      const startedAt = performance.now();
      let outcome: Outcome;
      let op: LoadResult["op"];
      if (roll < 4) {
        op = "create";
        const status = ["available", "pending", "sold"][i % 3];
        outcome = await call(`${base}/pets`, {
          method: "POST",
          body: JSON.stringify({ name: `load ${w}-${i}`, categoryId: 1 + (i % 9), status }),
        });
        if (outcome.status === 201) {
          const pet = JSON.parse(outcome.body) as Pet;
          acked.set(pet.id, pet);
        }
      } else if (roll < 7 || acked.size === 0) {
        op = "list";
        outcome = await call(`${base}/pets?limit=${1 + (i % 20)}`);
      } else {
        op = "get";
        const ids = [...acked.keys()];
        outcome = await call(`${base}/pets/${ids[i % ids.length]}`);
      }
      results.push({ op, startedAt, outcome });
      // Without a pause, a dead backend answered at once would make this loop spin.
      if (typeof outcome.status !== "number" || outcome.status >= 500) await sleep(20);
    }
  };
  const done = Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
  return {
    results,
    async stop() {
      running = false;
      await done;
    },
  };
}

/** Statuses of `results` by kind, for messages: {"create 201": 12, ...}. */
export function tally(results: LoadResult[]): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const r of results) {
    const label = `${r.op} ${r.outcome.status}${"code" in r.outcome && r.outcome.code ? ` ${r.outcome.code}` : ""}`;
    out[label] = ((out[label] as number | undefined) ?? 0) + 1;
    if ("error" in r.outcome && out["first error"] === undefined) out["first error"] = r.outcome.error;
  }
  return out;
}

/** Every acknowledged pet, read back one by one and in a full walk: the list of problems (empty when fine). */
export async function unreadable(base: string, acked: Map<number, Pet>): Promise<string[]> {
  const problems: string[] = [];
  for (const pet of acked.values()) {
    const r = await call(`${base}/pets/${pet.id}`);
    if (r.status !== 200) problems.push(`pet ${pet.id}: ${r.status}`);
    else if (r.body !== JSON.stringify(pet)) problems.push(`pet ${pet.id} changed: ${r.body}`);
  }
  const seen = new Set<number>();
  let next: string | undefined = `${base}/pets?limit=100`;
  let last = 0;
  for (let pages = 0; next !== undefined && pages < 10_000; pages++) {
    const r = await call(next);
    if (r.status !== 200 || !("headers" in r)) {
      problems.push(`walk: ${next} answered ${r.status}`);
      break;
    }
    for (const pet of JSON.parse(r.body) as Pet[]) {
      if (pet.id <= last) problems.push(`walk: ${pet.id} after ${last}`);
      last = pet.id;
      seen.add(pet.id);
    }
    const link = /^<([^>]+)>; rel="next"$/.exec(r.headers.get("link") ?? "")?.[1];
    next = link === undefined ? undefined : new URL(link, base).href;
  }
  for (const id of acked.keys()) if (!seen.has(id)) problems.push(`walk: acknowledged pet ${id} is missing`);
  return problems;
}

/**
 * Waits until the server at `base` creates pets again after a fault (at most `ms`), failing with
 * `what` otherwise. The caller then checks the process is the same one: recovery needs no restart.
 */
export function createsAgain(base: string, ms: number, what: string): Promise<void> {
  return waitUntil(
    async () => (await call(`${base}/pets`, { method: "POST", body: '{"name":"back","categoryId":1}' })).status === 201,
    ms,
    what,
  );
}

/** What one client saw for one name it created with one key, retrying through faults. */
export interface KeyedCreate {
  name: string;
  /** The distinct bodies of every 201 answered for the key (one when the promise holds). */
  pets: Set<string>;
  /** Status (or "no answer") → count, over every try. */
  tries: Record<string, number>;
  /** Set when an answer was neither a 201 nor one to retry (409, 503, no answer). */
  unexpected?: string;
}

/**
 * Clients that create pets with an Idempotency-Key each (a new UUID a name) and retry every
 * create with the same key and body, spreading tries over `bases()` (the servers alive now),
 * after a 503, a 409, a reset or a time-out, until a 201 (at most `perNameMs`); one name in
 * three is sent once more after its 201, which must replay the same pet. `stop()` lets every
 * client finish the name it has started.
 */
export function keyedCreates(bases: () => string[], clients = 12, perNameMs = 60_000) {
  const ledger = new Map<string, KeyedCreate>();
  let running = true;
  let abandoned = false;
  let n = 0;
  const client = async (w: number) => {
    while (running) {
      const i = n++;
      const key = randomUUID();
      const status = ["available", "pending", "sold"][i % 3];
      const entry: KeyedCreate = { name: `keyed ${w}-${i}`, pets: new Set(), tries: {} };
      ledger.set(key, entry);
      const body = JSON.stringify({ name: entry.name, categoryId: 1 + (i % 9), status });
      const deadline = Date.now() + perNameMs;
      let created = 0;
      for (let attempt = 0; Date.now() < deadline && created < (i % 3 === 0 ? 2 : 1) && !abandoned; attempt++) {
        const list = bases();
        const base = list[(w + attempt) % list.length] as string;
        const r = await call(`${base}/pets`, { method: "POST", body, headers: { "idempotency-key": key } }, 4000);
        entry.tries[String(r.status)] = (entry.tries[String(r.status)] ?? 0) + 1;
        if (r.status === 201 && "body" in r) {
          entry.pets.add(r.body);
          created++;
        } else if (r.status === 409 || r.status === 503 || r.status === "no answer") {
          await sleep(r.status === 409 ? 200 : 50);
        } else {
          entry.unexpected = `${r.status} ${"body" in r ? r.body : ""}`;
          break;
        }
      }
    }
  };
  const done = Promise.all(Array.from({ length: clients }, (_, w) => client(w)));
  return {
    ledger,
    async stop() {
      running = false;
      await done;
    },
    /** Ends every client at once (a test that failed half-way). */
    abandon() {
      running = false;
      abandoned = true;
    },
  };
}

/** Totals of tries by status over a ledger, for messages. */
export function keyedTally(ledger: Map<string, KeyedCreate>): Record<string, number> {
  const out: Record<string, number> = { names: ledger.size };
  for (const entry of ledger.values()) {
    for (const [status, count] of Object.entries(entry.tries)) out[status] = (out[status] ?? 0) + count;
  }
  return out;
}

/**
 * The promise of idempotent creates, checked on the store behind `base`: every key was answered
 * 201, every 201 of a key carries the same pet, and every name is stored exactly once, as that
 * pet. The list of problems (empty when fine).
 */
export async function keyedProblems(base: string, ledger: Map<string, KeyedCreate>): Promise<string[]> {
  const problems: string[] = [];
  const stored = new Map<string, Pet[]>();
  let next: string | undefined = `${base}/pets?limit=100`;
  for (let pages = 0; next !== undefined && pages < 10_000; pages++) {
    const r = await call(next);
    if (r.status !== 200 || !("headers" in r)) {
      problems.push(`walk: ${next} answered ${r.status}`);
      break;
    }
    for (const pet of JSON.parse(r.body) as Pet[]) stored.set(pet.name, [...(stored.get(pet.name) ?? []), pet]);
    const link = /^<([^>]+)>; rel="next"$/.exec(r.headers.get("link") ?? "")?.[1];
    next = link === undefined ? undefined : new URL(link, base).href;
  }
  for (const [key, entry] of ledger) {
    if (entry.unexpected !== undefined) problems.push(`${entry.name} (${key}): unexpected answer ${entry.unexpected}`);
    if (entry.pets.size === 0)
      problems.push(`${entry.name}: no 201 within the time given: ${JSON.stringify(entry.tries)}`);
    if (entry.pets.size > 1)
      problems.push(`${entry.name}: its 201s carry different pets: ${[...entry.pets].join(" ")}`);
    const copies = stored.get(entry.name) ?? [];
    if (copies.length !== 1) problems.push(`${entry.name}: stored ${copies.length} times`);
    else if (entry.pets.size === 1 && JSON.stringify(copies[0]) !== [...entry.pets][0]) {
      problems.push(`${entry.name}: stored as ${JSON.stringify(copies[0])}, answered ${[...entry.pets][0]}`);
    }
  }
  return problems;
}

/** A redis-server of our own, persisting every write to an append-only file before it answers. */
export interface OwnRedis {
  port: number;
  dir: string;
  url: string;
  /** Kills it with SIGKILL (no chance to save anything more). */
  kill(): Promise<void>;
  /** Stops it cleanly (SIGTERM, after a SIGCONT in case it is frozen); SIGKILL if it takes over 10 s. */
  stop(): Promise<void>;
  /** Sends a signal, e.g. SIGSTOP to freeze it and SIGCONT to thaw it. */
  signal(signal: NodeJS.Signals): void;
  /** Starts it again on the same port and folder (it reloads its append-only file). */
  start(): Promise<void>;
}

/** True when a redis-server binary can be run. */
export function redisServerInstalled(): boolean {
  return spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
}

async function pong(port: number): Promise<boolean> {
  const { connect } = await import("node:net");
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.on("error", () => done(false));
    s.on("data", (d) => done(d.toString().startsWith("+PONG")));
    s.on("connect", () => s.write("PING\r\n"));
  });
}

export async function ownRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const dir = tempDir("redis");
  let child: ChildProcess | undefined;
  const start = async () => {
    // appendfsync always: a write is on disk before Redis answers it, so what we acknowledged
    // survives a kill -9. (With `--appendonly no` a killed Redis forgets everything since its start.)
    child = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--dir",
        dir,
      ],
      { stdio: "ignore" },
    );
    await waitUntil(() => pong(port), 10_000, `redis-server on port ${port} answers`);
  };
  const running = () =>
    child === undefined || child.exitCode !== null || child.signalCode !== null ? undefined : child;
  await start();
  return {
    port,
    dir,
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      const c = running();
      if (c === undefined) return;
      const exited = new Promise((resolve) => c.once("exit", resolve));
      c.kill("SIGKILL");
      await exited;
    },
    async stop() {
      const c = running();
      if (c === undefined) return;
      const exited = new Promise((resolve) => c.once("exit", resolve));
      c.kill("SIGCONT");
      c.kill("SIGTERM");
      const timer = setTimeout(() => c.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
    signal(signal) {
      running()?.kill(signal);
    },
    start,
  };
}
