/**
 * The standalone server on a persistent storage (PETSTORE_STORAGE): a pet acknowledged by one
 * run is there after a clean stop and a new start, and ids go on from where they were.
 * The real server, as `npm start` runs it, in a child process.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Pet } from "../../lib/schemas.ts";
import { type Child, spawnServer, startedUrl } from "../support/server-child.ts";
import { type Backend, postgresBackend, redisBackend } from "./backends.ts";
import { freePort } from "./outage.ts";
import { POSTGRES_URL, REDIS_URL, RUN, serviceAvailable } from "./services.ts";

const KEY = "persistence-test-key";
const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

const s = suite("storage: persistence across server restarts");
const dir = mkdtempSync(join(tmpdir(), "petstore-persist-"));
const children: Child[] = [];
const cleanups: [Backend, string][] = [];

s.after(async () => {
  for (const child of children) await child.stop();
  for (const [backend, ns] of cleanups) await backend.cleanup([ns]);
  rmSync(dir, { recursive: true, force: true });
});

async function start(storage: string): Promise<{ child: Child; base: string }> {
  const child = spawnServer({ PORT: "0", PETSTORE_API_KEYS: KEY, PETSTORE_STORAGE: storage, LOG_LEVEL: "warn" });
  children.push(child);
  const url = await startedUrl(child);
  return { child, base: url.href.replace(/\/$/, "") };
}

async function stop(child: Child): Promise<void> {
  child.process.kill("SIGTERM");
  assert.is(await child.exited(), 0, "a clean stop exits 0");
}

function persists(label: string, storage: string): void {
  s(`server on ${label}: pets written by one run are there after a clean stop and a new start`, async () => {
    const first = await start(storage);
    const ready = await fetch(new URL("/readyz", first.base));
    assert.is(ready.status, 200);
    const created: Pet[] = [];
    for (const [name, status] of [
      ["Rex", "sold"],
      ["Mia", "available"],
    ]) {
      const response = await fetch(`${first.base}/pets`, {
        method: "POST",
        headers,
        body: JSON.stringify({ name, categoryId: 3, status }),
      });
      assert.is(response.status, 201);
      created.push((await response.json()) as Pet);
    }
    await stop(first.child);

    const second = await start(storage);
    const [rex, mia] = created as [Pet, Pet];
    const one = await fetch(`${second.base}/pets/${rex.id}`, { headers });
    assert.is(one.status, 200);
    assert.equal(await one.json(), rex);
    const list = await fetch(`${second.base}/pets`, { headers });
    assert.equal(await list.json(), created);
    const next = await fetch(`${second.base}/pets`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "Bo", categoryId: 3 }),
    });
    assert.is(next.status, 201);
    assert.is(((await next.json()) as Pet).id, mia.id + 1, "ids go on from where they were");
    await stop(second.child);
  });
}

persists("sqlite:<file>", `sqlite:${join(dir, "pets.db")}`);
if (serviceAvailable("redis", "server persistence")) {
  cleanups.push([redisBackend(), `${RUN}_persist`]);
  persists("redis://", `${REDIS_URL}?namespace=${RUN}_persist`);
}
if (serviceAvailable("postgres", "server persistence")) {
  cleanups.push([postgresBackend(), `${RUN}_persist`]);
  persists("postgres://", `${POSTGRES_URL}?namespace=${RUN}_persist`);
}

s("server with an unreachable storage: one line on stderr without the password, exit code 2", async () => {
  const port = await freePort();
  const child = spawnServer({
    PORT: "0",
    PETSTORE_API_KEYS: KEY,
    PETSTORE_STORAGE: `redis://:s3cret-pw@127.0.0.1:${port}`,
  });
  children.push(child);
  assert.is(await child.exited(), 2);
  const lines = child.stderr().trim().split("\n");
  assert.is(lines.length, 1, child.stderr());
  assert.match(lines[0] ?? "", /redis/);
  assert.not.match(child.stderr(), /s3cret/);
});

s.run();
