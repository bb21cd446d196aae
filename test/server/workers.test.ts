/**
 * PETSTORE_WORKERS: the standalone server on several processes (node:cluster). One start-up line
 * and one key for the server; memory storage refused; a worker SIGKILLed under load is replaced
 * (and the event logged) without losing an acknowledged pet; SIGTERM under load stops every
 * worker gracefully and loses nothing. Real child processes on a real SQLite file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Pet } from "../../lib/entries/schemas.ts";
import { openStorage } from "../../lib/index.ts";
import { restartDelay } from "../../server/cluster.ts";
import { ConfigError, loadConfig } from "../../server/config.ts";
import { startPetLoad } from "../support/pet-load.ts";
import { type Child, jsonLines, spawnServer, startedUrl } from "../support/server-child.ts";

const KEY = "workers-test-key";
const dir = mkdtempSync(join(tmpdir(), "petstore-workers-"));
let files = 0;
const sqliteSpec = () => `sqlite:${join(dir, `pets-${++files}.db`)}`;
const children: Child[] = [];

test.after.each(async () => {
  for (const child of children.splice(0)) await child.stop();
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

function start(env: Record<string, string>): Child {
  const child = spawnServer({ PORT: "0", PETSTORE_WORKERS: "2", ...env });
  children.push(child);
  return child;
}

/** Request log lines written so far, once at least `n` are there (bounded wait: logs are batched). */
async function requestLines(child: Child, n: number): Promise<Record<string, unknown>[]> {
  const lines = () => jsonLines(child.stdout()).filter((l) => l.msg === "request");
  for (let i = 0; i < 50 && lines().length < n; i++) await new Promise((r) => setTimeout(r, 100));
  return lines();
}

/** Every acknowledged pet is in the storage, as acknowledged, and the ids are distinct. */
async function assertNoneLost(spec: string, acked: Pet[]): Promise<void> {
  assert.is(new Set(acked.map((p) => p.id)).size, acked.length, "distinct ids");
  const storage = await openStorage(spec);
  try {
    for (const pet of acked) assert.equal(await storage.get(pet.id), pet, `pet ${pet.id} acknowledged with 201`);
  } finally {
    await storage.close();
  }
}

test("config: PETSTORE_WORKERS takes a count or auto (one a CPU); --workers overrides it", () => {
  const sqlite = { PETSTORE_API_KEYS: "k", PETSTORE_STORAGE: "sqlite:./x.db" };
  assert.is(loadConfig({ ...sqlite, PETSTORE_WORKERS: "4" }).config.workers, 4);
  assert.is(loadConfig({ ...sqlite, PETSTORE_WORKERS: "4" }, ["--workers", "3"]).config.workers, 3);
  const auto = availableParallelism();
  assert.is(loadConfig({ ...sqlite, PETSTORE_WORKERS: "auto" }).config.workers ?? 1, auto);
  assert.is(loadConfig({ ...sqlite, PETSTORE_WORKERS: "1" }).config.workers, undefined, "1 is the default");
  assert.is(loadConfig({ ...sqlite, PETSTORE_WORKERS: "" }).config.workers, undefined, "empty counts as unset");
});

test("config: a PETSTORE_WORKERS that is not auto or 1..1024 is a ConfigError naming it", () => {
  for (const bad of ["0", "-1", "two", "1.5", "1025", "2 workers"]) {
    assert.throws(
      () => loadConfig({ PETSTORE_API_KEYS: "k", PETSTORE_STORAGE: "sqlite:./x.db", PETSTORE_WORKERS: bad }),
      (e: unknown) => e instanceof ConfigError && /PETSTORE_WORKERS/.test(e.message),
      bad,
    );
  }
});

test("config: more than one worker on memory storage is a ConfigError that asks for a shared storage", () => {
  assert.throws(
    () => loadConfig({ PETSTORE_API_KEYS: "k", PETSTORE_WORKERS: "2" }),
    (e: unknown) => e instanceof ConfigError && /shared storage/.test(e.message) && /sqlite/.test(e.message),
  );
});

test("server: PETSTORE_WORKERS=2 with memory storage exits 2 with one line on stderr", async () => {
  const child = start({ PETSTORE_API_KEYS: KEY });
  assert.is(await child.exited(), 2);
  assert.is(child.stderr().split("\n").length, 2, JSON.stringify(child.stderr()));
  assert.match(child.stderr(), /PETSTORE_WORKERS=2 needs a shared storage/);
  assert.not.match(child.stdout(), /listening/);
});

test("server: a worker that cannot reach the storage ends the start with exit 2 and one line", async () => {
  const child = start({ PETSTORE_API_KEYS: KEY, PETSTORE_STORAGE: "redis://:hunter22@127.0.0.1:1" });
  assert.is(await child.exited(30_000), 2);
  const stderr = child.stderr();
  assert.is(stderr.split("\n").length, 2, JSON.stringify(stderr));
  assert.match(stderr, /redis|storage/i);
  assert.not.match(stderr, /hunter22|\n\s+at /);
});

test("server: 2 workers print one start-up line and one generated key, which both workers accept", async () => {
  const child = start({ PETSTORE_STORAGE: sqliteSpec() });
  const url = await startedUrl(child);
  const keyLine = await child.line(/generated API key/);
  const key = /: (\S+)$/.exec(keyLine)?.[1] ?? "";
  // One connection a request: the primary hands them to the workers in turn.
  for (let i = 0; i < 6; i++) {
    const res = await fetch(`${url}/pets`, { headers: { authorization: `Bearer ${key}`, connection: "close" } });
    assert.is(res.status, 200);
    await res.arrayBuffer();
  }
  const lines = await requestLines(child, 6);
  const pids = new Set(lines.map((l) => l.pid));
  assert.is(pids.size, 2, `request lines from pids ${[...pids].join(", ")}`);
  assert.not.ok(pids.has(child.process.pid), "the primary serves no request");
  const out = child.stdout();
  assert.is(out.match(/listening on/g)?.length, 1, "one start-up line");
  assert.is(out.match(/generated API key/g)?.length, 1, "one key line");
  assert.match(
    out,
    /listening on http:\/\/127\.0\.0\.1:\d+\/v1 \(storage: sqlite; 2 workers; GET \/healthz, \/readyz\)/,
  );
});

test("server: a worker SIGKILLed under load is replaced and logged, and no acknowledged pet is lost", async () => {
  const spec = sqliteSpec();
  const child = start({ PETSTORE_STORAGE: spec, PETSTORE_API_KEYS: KEY });
  const url = (await startedUrl(child)).href.replace(/\/$/, "");
  const load = startPetLoad(url, KEY);
  try {
    await load.reached(40);
    const lines = await requestLines(child, 1);
    const victim = Number(lines[0]?.pid);
    assert.ok(victim > 0 && victim !== child.process.pid, `a worker's pid: ${victim}`);
    process.kill(victim, "SIGKILL");
    const died = JSON.parse(await child.line(/worker died/)) as Record<string, unknown>;
    assert.is(died.worker, victim);
    assert.is(died.signal, "SIGKILL");
    const replaced = JSON.parse(await child.line(/worker started/)) as Record<string, unknown>;
    assert.ok(Number(replaced.worker) > 0 && replaced.worker !== victim);
    const after = load.acked.length;
    await load.reached(after + 40); // the server still serves, from the survivor and the new worker
  } finally {
    await load.stop();
  }
  await assertNoneLost(spec, load.acked);
  child.process.kill("SIGTERM");
  assert.is(await child.exited(30_000), 0);
});

test("server: SIGTERM under load stops both workers gracefully (exit 0) and loses no acknowledged pet", async () => {
  const spec = sqliteSpec();
  const child = start({ PETSTORE_STORAGE: spec, PETSTORE_API_KEYS: KEY });
  const url = (await startedUrl(child)).href.replace(/\/$/, "");
  const load = startPetLoad(url, KEY);
  let code: number | null;
  try {
    await load.reached(60);
    child.process.kill("SIGTERM");
    code = await child.exited(30_000);
  } finally {
    await load.stop();
  }
  assert.is(code, 0, child.stderr());
  assert.ok(load.acked.length >= 60);
  await assertNoneLost(spec, load.acked);
  const stopped = jsonLines(child.stdout()).filter((l) => l.msg === "stopped");
  assert.is(stopped.length, 3, "both workers and the primary say they stopped");
});

test("server: SIGINT (Ctrl-C) stops the primary and both workers, exit 0, each saying it stopped", async () => {
  const child = start({ PETSTORE_STORAGE: sqliteSpec(), PETSTORE_API_KEYS: KEY });
  await startedUrl(child);
  child.process.kill("SIGINT");
  assert.is(await child.exited(30_000), 0, child.stderr());
  assert.is(jsonLines(child.stdout()).filter((l) => l.msg === "stopped").length, 3);
});

test("server: workers that keep dying are replaced after a growing pause (the log says how long)", async () => {
  const child = start({ PETSTORE_STORAGE: sqliteSpec(), PETSTORE_API_KEYS: KEY });
  const url = await startedUrl(child);
  const pauses: number[] = [];
  for (let round = 1; round <= 3; round++) {
    // A worker's pid: from the request log of a fresh connection (the survivor or the replacement).
    const before = jsonLines(child.stdout()).filter((l) => l.msg === "request").length;
    await (await fetch(`${url}/pets`, { headers: { authorization: `Bearer ${KEY}`, connection: "close" } })).text();
    const lines = await requestLines(child, before + 1);
    process.kill(Number(lines[lines.length - 1]?.pid), "SIGKILL");
    const died = () => jsonLines(child.stdout()).filter((l) => l.msg === "worker died: starting another");
    const started = () => jsonLines(child.stdout()).filter((l) => l.msg === "worker started");
    for (let i = 0; i < 100 && (died().length < round || started().length < round); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.is(started().length, round, `replacement ${round} started`);
    pauses.push(Number(died()[round - 1]?.restartInMs));
  }
  assert.equal(pauses, [0, 500, 1000]);
});

test("restartDelay: a first death is replaced at once; a crash loop waits longer each time, at most 30 s", () => {
  assert.is(restartDelay(1), 0);
  const delays = [2, 3, 4, 5, 6].map(restartDelay);
  for (let i = 1; i < delays.length; i++) assert.ok((delays[i] as number) > (delays[i - 1] as number), String(delays));
  assert.is(restartDelay(50), 30_000);
});

test.run();
