/**
 * `petstore export`, `import` and `migrate` as a user runs them (the command, in a child process):
 * files and stdout, the summary lines, `--quiet`, `--merge`, `--verify`, the exit codes (0 done, 2
 * bad input with nothing written, 1 a storage lost mid-way, 130 Ctrl-C), and an import stopped by
 * Ctrl-C, killed, or cut off from its database, each finished by running it again.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { memoryStorage } from "../../lib/entries/storage.ts";
import { requireFromDriver } from "../../lib/storage/driver.ts";
import { openStorage } from "../../lib/storage/open.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import { importFile } from "../../server/index.ts";
import { postgresBackend } from "../storage/backends.ts";
import { freePort } from "../storage/outage.ts";
import { POSTGRES_URL, RUN, serviceAvailable } from "../storage/services.ts";
import { runProgram, startProgram } from "../support/program.ts";
import { tcpProxy } from "../support/tcp-proxy.ts";

const test = suite("petstore export, import, migrate");
const dir = mkdtempSync(join(tmpdir(), "petstore-transfer-cli-"));
test.after(() => rmSync(dir, { recursive: true, force: true }));
const petstore = (args: string[], env: Record<string, string> = {}) =>
  runProgram(["server/cli.ts", ...args], env, 120_000);
const sqlite = (name: string) => `sqlite:${join(dir, name)}`;

/** Runs `work` on the store `spec` names, then closes it. */
async function withStore<T>(spec: string, work: (storage: PetStorage) => Promise<T>): Promise<T> {
  const storage = await openStorage(spec);
  try {
    return await work(storage);
  } finally {
    await storage.close();
  }
}

async function allPets(spec: string) {
  return withStore(spec, async (storage) => {
    const pets = [];
    let after = 0;
    for (;;) {
      const page = await storage.list({ after, limit: 1000 });
      pets.push(...page);
      if (page.length < 1000) return pets;
      after = (page[page.length - 1] as { id: number }).id;
    }
  });
}

/** An export file of `n` pets (ids 1…n) and no keys, written as `petstore export` writes one. */
function bigExport(n: number): string {
  const lines = [
    JSON.stringify({
      format: "petstore-export",
      version: 1,
      exportedAt: new Date().toISOString(),
      nextId: n + 1,
      pets: n,
      keys: 0,
    }),
  ];
  for (let id = 1; id <= n; id++)
    lines.push(JSON.stringify({ pet: { id, name: `pet ${id}`, categoryId: 1 + (id % 9), status: "available" } }));
  const body = `${lines.join("\n")}\n`;
  const path = join(dir, `big-${n}-${Date.now()}.ndjson`);
  writeFileSync(
    path,
    `${body}${JSON.stringify({ end: true, sha256: createHash("sha256").update(body).digest("hex") })}\n`,
  );
  return path;
}

const SOURCE = sqlite("source.db");

test.before(async () => {
  await withStore(SOURCE, async (storage) => {
    for (let i = 1; i <= 300; i++)
      await storage.create({ name: `pet ${i}`, categoryId: i, status: i % 3 ? "available" : "sold" });
    const now = Date.now();
    for (const key of ["k1", "k2"]) {
      await storage.createOnce?.(
        { name: key, categoryId: 1, status: "pending" },
        { scope: "s", key, fingerprint: "c".repeat(64), now, expiresAt: now + 3_600_000 },
      );
    }
  });
});

test("export --out writes the file whole (no partial file left) and says what it wrote on stderr", async () => {
  const out = join(dir, "backup.ndjson");
  const { code, stdout, stderr } = await petstore(["export", "--storage", SOURCE, "--out", out]);
  assert.is(code, 0, stderr);
  assert.is(stdout, "");
  assert.match(
    stderr,
    new RegExp(`^exported 302 pets and 2 keys to ${out.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} in [0-9.]+ s\\n$`),
  );
  assert.equal(
    readdirSync(dir).filter((name) => name.includes("partial")),
    [],
  );
  const result = await importFile(memoryStorage(), out);
  assert.is(result.pets, 302);
  assert.is(result.keys, 2);
});

test("export without --out writes to stdout (PETSTORE_STORAGE names the store); --quiet prints nothing else", async () => {
  const { code, stdout, stderr } = await petstore(["export", "--quiet"], { PETSTORE_STORAGE: SOURCE });
  assert.is(code, 0, stderr);
  assert.is(stderr, "");
  const lines = stdout.trimEnd().split("\n");
  assert.is(lines.length, 1 + 302 + 2 + 1);
  const file = readFileSync(join(dir, "backup.ndjson"), "utf8").trimEnd().split("\n");
  assert.equal(lines.slice(1, -1), file.slice(1, -1), "the same pets and keys as the file");
});

test("import writes the file into a new store: the same pets, a summary line; again: everything already there", async () => {
  const target = sqlite("imported.db");
  const first = await petstore(["import", join(dir, "backup.ndjson"), "--storage", target]);
  assert.is(first.code, 0, first.stderr);
  assert.match(first.stderr, /^imported 302 pets and 2 keys in [0-9.]+ s; the next id is 303 or above\n$/);
  assert.equal(await allPets(target), await allPets(SOURCE));
  const again = await petstore(["import", join(dir, "backup.ndjson"), "--storage", target]);
  assert.is(again.code, 0, again.stderr);
  assert.match(again.stderr, /^imported 0 pets \(302 already there\) and 0 keys \(2 already there\)/);
});

test("import of a changed file: exit 2, one line naming the line, nothing written", async () => {
  const text = readFileSync(join(dir, "backup.ndjson"), "utf8").replace('"name":"pet 2"', '"name":"pet Z"');
  const path = join(dir, "changed.ndjson");
  writeFileSync(path, text);
  const target = sqlite("untouched.db");
  const { code, stderr } = await petstore(["import", path, "--storage", target]);
  assert.is(code, 2);
  assert.is(
    stderr,
    `petstore import: ${path} line 306: the digest does not match the lines before it: the file was changed or cut short\n`,
  );
  assert.equal(await allPets(target), []);
  await withStore(target, async (storage) => assert.is(await storage.transfer?.nextId(), 1));
});

test("import into a store holding other pets: exit 2 unless --merge", async () => {
  const target = sqlite("other.db");
  await withStore(target, async (storage) => {
    await storage.transfer?.putPets([{ id: 1000, name: "mine", categoryId: 1, status: "sold" }]);
  });
  const refused = await petstore(["import", join(dir, "backup.ndjson"), "--storage", target]);
  assert.is(refused.code, 2);
  assert.match(
    refused.stderr,
    /^petstore import: the store holds 1 pet not in the input \(id 1000\): import into an empty store, or merge \(--merge\) to keep them; nothing written\n$/,
  );
  assert.is((await allPets(target)).length, 1);
  const merged = await petstore(["import", join(dir, "backup.ndjson"), "--storage", target, "--merge"]);
  assert.is(merged.code, 0, merged.stderr);
  assert.is((await allPets(target)).length, 303);
});

test("migrate --verify moves a store and compares them page by page", async () => {
  const target = `${sqlite("migrated.db")}?namespace=moved`;
  const { code, stdout, stderr } = await petstore(["migrate", "--from", SOURCE, "--to", target, "--verify"]);
  assert.is(code, 0, stderr);
  assert.is(stdout, "verified 302 pets, 2 keys\n");
  assert.equal(await allPets(target), await allPets(SOURCE));
});

test("command lines that cannot work: exit 2 and one line that says what to do", async () => {
  const cases: [string[], Record<string, string>, RegExp][] = [
    [["export"], {}, /^petstore export: which store\? give --storage URL \(or set PETSTORE_STORAGE\)\n$/],
    [["export", "--storage", "memory"], {}, /^petstore export: a memory store lives only inside its server's process/],
    [["import"], { PETSTORE_STORAGE: SOURCE }, /^petstore import: import needs one export file/],
    [
      ["export", "--merge"],
      { PETSTORE_STORAGE: SOURCE },
      /^petstore export: export takes no --merge; see petstore export --help\n$/,
    ],
    [["export", "--colour"], {}, /^petstore export: Unknown option '--colour'.*; see petstore export --help\n$/],
    [
      ["import", join(dir, "missing.ndjson"), "--storage", sqlite("x.db")],
      {},
      /^petstore import: ENOENT: no such file or directory/,
    ],
    [["migrate", "--from", SOURCE, "--to", SOURCE], {}, /^petstore migrate: --from and --to name the same store\n$/],
  ];
  for (const [args, env, message] of cases) {
    const { code, stderr } = await petstore(args, { PETSTORE_STORAGE: "", ...env });
    assert.is(code, 2, `${args.join(" ")}: ${stderr}`);
    assert.match(stderr, message);
  }
  const help = await petstore(["import", "--help"]);
  assert.is(help.code, 0);
  assert.match(help.stdout, /^Usage: petstore export \[--storage URL\] \[--out FILE\] \[--skip-invalid\] \[--quiet\]/);
});

test("migrate --verify exits 1 naming the first page that differs (a target that kept other pets)", async () => {
  const target = sqlite("verify.db");
  await withStore(target, async (storage) => {
    await storage.transfer?.putPets([{ id: 5000, name: "kept", categoryId: 1, status: "sold" }]);
  });
  const { code, stdout, stderr } = await petstore(["migrate", "--from", SOURCE, "--to", target, "--merge", "--verify"]);
  assert.is(code, 1, stderr);
  assert.is(stdout, "");
  assert.match(
    stderr,
    /petstore migrate: verify failed: the page of pets after id 300 differs: 2 pets in the source, 3 in the target, not the same\n$/,
  );
});

/** Waits until the SQLite file `path` (table prefix `petstore`) holds a pet: an import under way. */
async function untilWriting(path: string, program: ReturnType<typeof startProgram>): Promise<void> {
  const sqlite3 = requireFromDriver<typeof import("sqlite3")>("@keyv/sqlite", "sqlite3", "sqlite");
  for (let i = 0; i < 3000; i++) {
    if (program.child.exitCode !== null) throw new Error(`the import ended first:\n${program.stderr()}`);
    const count = await new Promise<number>((resolve) => {
      const db = new sqlite3.Database(path, sqlite3.OPEN_READONLY, (error) => {
        if (error) return resolve(0);
        db.get("SELECT count(*) AS n FROM petstore_index", (failure, row: { n: number } | undefined) => {
          db.close(() => resolve(failure ? 0 : (row?.n ?? 0)));
        });
      });
    });
    if (count > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error("the import wrote nothing in 15 s");
}

test("an import stopped by Ctrl-C exits 130 and says to run it again, which finishes it; so does one killed", async () => {
  const file = bigExport(300_000);
  for (const [signal, name] of [
    ["SIGINT", "ctrl-c.db"],
    ["SIGKILL", "killed.db"],
  ] as const) {
    const target = sqlite(name);
    const program = startProgram(["server/cli.ts", "import", file, "--storage", target]);
    try {
      await untilWriting(join(dir, name), program);
      program.child.kill(signal);
      const code = await program.exited(30_000);
      if (signal === "SIGINT") {
        assert.is(code, 130, program.stderr());
        assert.match(
          program.stderr(),
          /petstore import: stopped \(Ctrl-C\): the import is unfinished \(servers of the store refuse creates until it is done\): run the same command again to finish it, or undo it with petstore import --abandon\n$/,
        );
      }
    } finally {
      await program.kill();
    }
    const written = (await allPets(target)).length;
    assert.ok(written < 300_000, `stopped part-way (${written} written)`);
    const again = await petstore(["import", file, "--storage", target]);
    assert.is(again.code, 0, again.stderr);
    assert.match(again.stderr, new RegExp(`^imported ${300_000 - written} pets \\(${written} already there\\)`));
    assert.is((await allPets(target)).length, 300_000);
    await withStore(target, async (storage) => assert.is(await storage.transfer?.nextId(), 300_001));
  }
});

/** Waits until the Postgres store `table` holds a pet: an import under way. */
async function untilRows(table: string, program: ReturnType<typeof startProgram>): Promise<void> {
  const pg = requireFromDriver<{
    Pool: new (c: object) => { query(sql: string): Promise<{ rows: { n: string }[] }>; end(): Promise<void> };
  }>("@keyv/postgres", "pg", "postgres");
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  try {
    for (let i = 0; i < 3000; i++) {
      if (program.child.exitCode !== null) throw new Error(`the import ended first:\n${program.stderr()}`);
      const n = await pool.query(`SELECT count(*) AS n FROM ${table}_index`).then(
        (r) => Number(r.rows[0]?.n),
        () => 0,
      );
      if (n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error("the import wrote nothing in 15 s");
  } finally {
    await pool.end();
  }
}

test("an export stopped by Ctrl-C exits 130 and leaves no file", async () => {
  const store = sqlite("killed.db"); // 300,000 pets, from the test before
  const out = join(dir, "stopped.ndjson");
  const program = startProgram(["server/cli.ts", "export", "--storage", store, "--out", out]);
  try {
    for (let i = 0; i < 3000 && !readdirSync(dir).some((name) => name.startsWith("stopped.ndjson.")); i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    program.child.kill("SIGINT");
    assert.is(await program.exited(30_000), 130, program.stderr());
    assert.match(program.stderr(), /petstore export: stopped \(Ctrl-C\): nothing was written\n$/);
  } finally {
    await program.kill();
  }
  assert.equal(
    readdirSync(dir).filter((name) => name.startsWith("stopped.ndjson")),
    [],
  );
});

if (serviceAvailable("postgres", "an import cut off from Postgres")) {
  test("an import whose database goes away mid-way exits 1 and says to run it again, which finishes it", async () => {
    const file = bigExport(100_000);
    const proxy = tcpProxy(await freePort(), "127.0.0.1", Number(new URL(POSTGRES_URL).port || 5432));
    await proxy.start();
    const table = `${RUN}_cut`;
    const through = new URL(POSTGRES_URL);
    through.port = String(proxy.port);
    const cut = `${through.href}?namespace=${table}`;
    const direct = `${POSTGRES_URL}?namespace=${table}`;
    try {
      const program = startProgram(["server/cli.ts", "import", file, "--storage", cut]);
      try {
        await untilRows(table, program);
        await proxy.cut();
        assert.is(await program.exited(30_000), 1, program.stderr());
        assert.match(
          program.stderr(),
          /^petstore import: storage failed: .*; the import is unfinished .*: run the same command again to finish it, or undo it with petstore import --abandon\n$/,
          program.stderr(),
        );
      } finally {
        await program.kill();
      }
      assert.ok((await allPets(direct)).length < 100_000);
      const again = await petstore(["import", file, "--storage", direct]);
      assert.is(again.code, 0, again.stderr);
      assert.is((await allPets(direct)).length, 100_000);
    } finally {
      await proxy.cut();
      await postgresBackend().cleanup([table]);
    }
  });
}

test.run();
