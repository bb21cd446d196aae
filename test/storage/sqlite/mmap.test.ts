/**
 * SQLite reads its file through memory-mapped I/O (256 MiB by default, `mmapBytes`), so a page
 * of a large store costs memory reads rather than a system call a page; 0 turns it off, and
 * anything but an integer of 0 or more is a StorageConfigError.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createPetStore } from "../../../lib/index.ts";
import { StorageConfigError } from "../../../lib/storage/config-error.ts";
import type { PetStorage } from "../../../lib/storage/port.ts";
import { type SqliteStorageOptions, sqliteStorage } from "../../../lib/storage/sqlite/index.ts";

const s = suite("storage: sqlite memory-mapped reads");
const dir = realpathSync(mkdtempSync(join(tmpdir(), "petstore-mmap-"))); // as /proc/self/maps names it

s.after(() => rmSync(dir, { recursive: true, force: true }));

/** True when this process maps the database file itself (not its -wal or -shm companions). */
function mapped(path: string): boolean {
  return readFileSync("/proc/self/maps", "utf8")
    .split("\n")
    .some((line) => line.endsWith(` ${path}`));
}

/**
 * A store of `count` sold pets, written, closed (which checkpoints the WAL into the file, so reads
 * come from the file itself) and opened again with the same options.
 */
async function reopened(options: SqliteStorageOptions, count: number, pad = ""): Promise<PetStorage> {
  const writer = await sqliteStorage(options);
  for (let i = 0; i < count; i++) await writer.create({ name: `pet ${i}${pad}`, categoryId: 1, status: "sold" });
  await writer.close();
  return sqliteStorage(options);
}

/** Reads back pets of a reopened store; true when the file was mapped to read them. */
async function writeThenRead(path: string, mmapBytes?: number): Promise<boolean> {
  const reader = await reopened(mmapBytes === undefined ? { path } : { path, mmapBytes }, 50);
  try {
    const page = await reader.list({ status: "sold", after: 10, limit: 20 });
    assert.equal(
      page.map((pet) => pet.id),
      Array.from({ length: 20 }, (_, i) => 11 + i),
    );
    assert.equal(await reader.get(42), { id: 42, name: "pet 41", categoryId: 1, status: "sold" });
    return mapped(path);
  } finally {
    await reader.close();
  }
}

s(
  "sqlite storage: by default the file is read through memory-mapped I/O; mmapBytes: 0 reads it with system calls",
  async () => {
    if (!existsSync("/proc/self/maps")) return console.warn("SKIPPED: no /proc/self/maps on this system");
    assert.ok(await writeThenRead(join(dir, "default.db")), "the database file is mapped");
    assert.not.ok(await writeThenRead(join(dir, "off.db"), 0), "mmapBytes: 0 maps nothing");
    assert.ok(await writeThenRead(join(dir, "small.db"), 64 * 1024), "a smaller size maps too");
  },
);

s(
  "sqlite storage: a file cut short or overwritten under a running store is an error on every read, never a crash (memory-mapped reads included)",
  async () => {
    for (const damage of ["truncate", "overwrite"] as const) {
      const path = join(dir, `${damage}.db`);
      const storage = await reopened({ path }, 1500, ` ${"x".repeat(60)}`);
      try {
        assert.is((await storage.list({ after: 0, limit: 100 })).length, 100, "pages of the file are mapped and read");
        if (damage === "truncate") truncateSync(path, 8192);
        else writeFileSync(path, "not a database");
        for (const after of [0, 500, 1000, 1400]) {
          const error = await Promise.resolve(storage.list({ status: "sold", after, limit: 50 })).then(
            () => undefined,
            (e: unknown) => e,
          );
          assert.match(String(error), /SQLITE_CORRUPT|SQLITE_IOERR|SQLITE_NOTADB/, `${damage}, page after ${after}`);
        }
        assert.match(
          String(await Promise.resolve(storage.get(1200)).catch((e: unknown) => e)),
          /SQLITE_/,
          `${damage}, get`,
        );
        const store = createPetStore({ auth: ["k"], storage });
        const answer = await store.handle({
          method: "GET",
          path: "/v1/pets/1200",
          headers: { authorization: "Bearer k" },
        });
        assert.is(answer.status, 503, `${damage}: over HTTP, storage_unavailable`);
      } finally {
        await storage.close();
      }
    }
  },
);

s("sqlite storage: mmapBytes must be an integer of 0 or more", async () => {
  for (const mmapBytes of [-1, 1.5, Number.NaN, "1" as unknown as number]) {
    try {
      const storage = await sqliteStorage({ path: join(dir, "bad.db"), mmapBytes });
      await storage.close();
      assert.unreachable(`mmapBytes ${String(mmapBytes)} should be refused`);
    } catch (error) {
      assert.instance(error, StorageConfigError);
      assert.match((error as Error).message, /mmapBytes must be an integer of 0 or more/);
    }
  }
});

s.run();
