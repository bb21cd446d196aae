/**
 * A SQLite file made read-only under a running server. `chmod` would prove nothing here: the
 * server already holds the file open (a permission is checked at open, not at write), and root
 * ignores permissions anyway. The immutable attribute (`chattr +i`, root only) is checked by the
 * kernel on every write, even through a descriptor opened before: so the database, its WAL and
 * shared-memory files and their folder are made immutable while the server runs.
 * Writes then get 503 storage_unavailable (never 500, never a hang), the process stays up, and
 * once the attribute is removed the same process writes again; every 201 survives a restart.
 */
import { spawnSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Child } from "../support/server-child.ts";
import { spawnServer, startedUrl } from "../support/server-child.ts";
import type { Pet } from "./support.ts";
import { createsAgain, KEY, mixedLoad, sleep, tally, tempDir, unreadable } from "./support.ts";

/** Whether `chattr +i` works here (root with CAP_LINUX_IMMUTABLE on a filesystem that has the attribute). */
function immutableWorks(): boolean {
  if (process.getuid?.() !== 0) return false;
  const dir = tempDir("chattr");
  const file = join(dir, "probe");
  writeFileSync(file, "x");
  const ok = spawnSync("chattr", ["+i", file], { stdio: "ignore" }).status === 0;
  if (ok) spawnSync("chattr", ["-i", file], { stdio: "ignore" });
  rmSync(dir, { recursive: true, force: true });
  return ok;
}

if (!immutableWorks()) {
  console.log(
    "\n*** SKIPPED: SQLite read-only fault test: needs root and `chattr +i` (file permissions cannot make an open file read-only) ***\n",
  );
} else {
  const dir = tempDir("sqlite");
  const db = join(dir, "pets.db");
  // Not the -shm file: it is SQLite's shared memory (mmap), and a write to a mapped page of an
  // immutable file is a SIGBUS, the same for any program; it is no database file an operator
  // makes read-only.
  const files = [db, `${db}-wal`, `${db}-journal`];
  const chattr = (flag: "+i" | "-i") => {
    for (const path of [...files, dir]) {
      if (existsSync(path)) spawnSync("chattr", [flag, path], { stdio: "ignore" });
    }
  };
  const children: Child[] = [];
  test.after(async () => {
    for (const child of children) await child.stop();
    chattr("-i");
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async () => {
    const child = spawnServer({
      PORT: "0",
      PETSTORE_API_KEYS: KEY,
      PETSTORE_STORAGE: `sqlite:${db}`,
      LOG_LEVEL: "warn",
    });
    children.push(child);
    return { child, base: (await startedUrl(child)).href.replace(/\/$/, "") };
  };

  test("faults: a SQLite file made read-only (immutable) under load refuses writes with 503 storage_unavailable, never 500 or a hang; writable again, the same process recovers; every 201 survives a restart", async () => {
    const { child, base } = await start();
    const pid = child.process.pid;
    const acked = new Map<number, Pet>();
    const before = mixedLoad(base, acked, 6);
    await sleep(800);
    await before.stop();
    assert.ok(acked.size > 10, `pets were created: ${JSON.stringify(tally(before.results))}`);

    const during = mixedLoad(base, acked, 6);
    await sleep(200);
    chattr("+i");
    const lockedAt = performance.now();
    await sleep(2000);
    await during.stop();
    const counts = JSON.stringify(tally(during.results));
    const summary = `${counts}; server exit ${child.process.exitCode} ${child.process.signalCode}; stderr: ${child.stderr().slice(-2000)}`;
    for (const r of during.results) {
      assert.ok(r.outcome.status !== "no answer", `a request hung: ${summary}`);
      assert.ok([200, 201, 503].includes(r.outcome.status as number), `only 2xx or 503: ${summary}`);
    }
    const writes = during.results.filter((r) => r.op === "create" && r.startedAt > lockedAt + 100);
    assert.ok(writes.length > 5, `writes were tried while read-only: ${summary}`);
    for (const w of writes) {
      assert.is(w.outcome.status, 503, `every write to the read-only file is 503: ${summary}`);
      assert.is((w.outcome as { code?: string }).code, "storage_unavailable");
    }
    console.log(`  sqlite read-only: ${counts}`);
    assert.is(child.process.exitCode, null, "the server process is still up");

    chattr("-i");
    await createsAgain(base, 10_000, "the server writes again once the file is writable");
    assert.is(child.process.pid, pid);
    const after = mixedLoad(base, acked, 6);
    await sleep(500);
    await after.stop();
    assert.ok(
      after.results.every((r) => r.outcome.status === 200 || r.outcome.status === 201),
      `after recovery: ${JSON.stringify(tally(after.results))}`,
    );
    assert.equal(await unreadable(base, acked), []);

    child.process.kill("SIGTERM");
    assert.is(await child.exited(), 0);
    const again = await start();
    assert.equal(await unreadable(again.base, acked), [], "every acknowledged pet is there after a restart");
    again.child.process.kill("SIGTERM");
    assert.is(await again.child.exited(), 0);
  });

  test.run();
}
