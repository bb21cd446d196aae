/**
 * `petstore import`'s input, read once (issue 56, contract 1.4): a pipe, standard input and a FIFO
 * import every pet; a FIFO waiting for its writer ends on SIGTERM; a file that changes during the
 * import is refused; a line longer than any export's is refused naming it; a pet at 2^53-1 imports;
 * paths and quoted text are printed with control and bidirectional characters escaped. And the
 * export's side: a bad record stops it naming its key, `--skip-invalid` writes every other one; two
 * imports of one file into one store at once both end done.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { printable } from "../../lib/printable.ts";
import { MAX_ID } from "../../lib/schemas.ts";
import { openStorage } from "../../lib/storage/open.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import { type Backend, backends, keyvJson } from "../storage/backends.ts";
import { RUN } from "../storage/services.ts";
import { ROOT, runProgram, startProgram } from "../support/program.ts";

const test = suite("petstore import's input, and export's bad records");
const dir = mkdtempSync(join(tmpdir(), "petstore-input-"));
const list = backends("import input", { memory: false });
const namespaces = new Map<Backend, string[]>();
let count = 0;
test.after(async () => {
  for (const [backend, names] of namespaces) await backend.cleanup(names);
  rmSync(dir, { recursive: true, force: true });
});
const petstore = (args: string[]) => runProgram(["server/cli.ts", ...args], {}, 120_000);
const sqlite = (name: string) => `sqlite:${join(dir, name)}`;

/** The text of an export of pets `first`…`last` (no keys), as `petstore export` writes one. */
function exportText(first: number, last: number, nextId = last + 1): string {
  const lines = [
    JSON.stringify({
      format: "petstore-export",
      version: 1,
      exportedAt: new Date().toISOString(),
      nextId,
      pets: last - first + 1,
      keys: 0,
    }),
  ];
  for (let id = first; id <= last; id++) {
    lines.push(JSON.stringify({ pet: { id, name: `pet ${id}`, categoryId: 1, status: "sold" } }));
  }
  const body = `${lines.join("\n")}\n`;
  return `${body}${JSON.stringify({ end: true, sha256: createHash("sha256").update(body).digest("hex") })}\n`;
}

function exportFile(first: number, last: number): string {
  const path = join(dir, `export-${++count}.ndjson`);
  writeFileSync(path, exportText(first, last));
  return path;
}

async function withStore<T>(spec: string, work: (storage: PetStorage) => Promise<T>): Promise<T> {
  const storage = await openStorage(spec);
  try {
    return await work(storage);
  } finally {
    await storage.close();
  }
}

const idsOf = (spec: string) =>
  withStore(spec, async (storage) => (await storage.list({ after: 0, limit: 1000 })).map((pet) => pet.id));

/** Runs `petstore import <args>` with `input` written to its standard input. */
function importFromStdin(args: string[], input: string) {
  const run = spawnSync(process.execPath, ["--import", "tsx", "server/cli.ts", "import", ...args], {
    cwd: ROOT,
    input,
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: run.status, stderr: run.stderr };
}

test("a pipe on standard input (-) imports every pet, and the summary counts what was written", () => {
  const target = sqlite("stdin.db");
  const run = importFromStdin(["-", "--storage", target], exportText(1, 250));
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stderr, /^imported 250 pets and 0 keys in /);
  return idsOf(target).then((ids) =>
    assert.equal(
      ids,
      Array.from({ length: 250 }, (_, i) => i + 1),
    ),
  );
});

test("a shell's pipe into /dev/stdin, and <(…), import every pet, not the sequence alone", async () => {
  const file = exportFile(1, 10);
  const node = `'${process.execPath}' --import tsx server/cli.ts import`;
  for (const [name, command] of [
    ["dev-stdin.db", `cat '${file}' | ${node} /dev/stdin --storage ${sqlite("dev-stdin.db")}`],
    ["substituted.db", `${node} <(cat '${file}') --storage ${sqlite("substituted.db")}`],
  ] as const) {
    const run = spawnSync("bash", ["-c", command], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
    assert.is(run.status, 0, run.stderr);
    assert.match(run.stderr, /^imported 10 pets/);
    assert.equal(await idsOf(sqlite(name)), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  }
});

/**
 * Waits until `program` is blocked opening a FIFO that has no writer yet (Linux: a thread of it
 * sleeps in the kernel's `wait_for_partner`). A fixed pause is not enough on a loaded machine, where
 * starting the command (tsx compiling it) alone can take seconds.
 */
async function untilWaitingForWriter(program: ReturnType<typeof startProgram>, ms = 60_000): Promise<void> {
  const tasks = `/proc/${program.child.pid}/task`;
  if (!existsSync("/proc/self/task")) {
    console.warn("no /proc on this system: waiting 5 s for the import to open its FIFO instead");
    return void (await new Promise((resolve) => setTimeout(resolve, 5000)));
  }
  const until = performance.now() + ms;
  while (performance.now() < until) {
    if (program.child.exitCode !== null || program.child.signalCode !== null) {
      throw new Error(`the import ended before it waited for a writer:\n${program.stderr()}`);
    }
    const waits = readdirSync(tasks).map((task) => {
      try {
        return readFileSync(join(tasks, task, "wchan"), "utf8");
      } catch {
        return ""; // that thread ended meanwhile
      }
    });
    if (waits.includes("wait_for_partner")) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the import did not wait for a writer within ${ms} ms:\n${program.stderr()}`);
}

test("a FIFO imports every pet from its writer, and one still waiting for a writer ends on SIGTERM (exit 130, nothing written)", async () => {
  const fifo = join(dir, "pets.fifo");
  assert.is(spawnSync("mkfifo", [fifo]).status, 0, "mkfifo");
  const target = sqlite("fifo.db");
  const program = startProgram(["server/cli.ts", "import", fifo, "--storage", target]);
  const writer = spawn("sh", ["-c", `cat > '${fifo}'`], { stdio: ["pipe", "ignore", "ignore"] });
  writer.stdin.end(exportText(1, 40));
  assert.is(await program.exited(60_000), 0, program.stderr());
  assert.is((await idsOf(target)).length, 40);

  const waiting = startProgram(["server/cli.ts", "import", fifo, "--storage", sqlite("fifo-stopped.db")]);
  await untilWaitingForWriter(waiting); // its signal handling is installed by then (before the open)
  waiting.child.kill("SIGTERM");
  assert.is(await waiting.exited(10_000), 130, waiting.stderr());
  assert.match(waiting.stderr(), /petstore import: stopped \(Ctrl-C\): nothing was written\n$/);
});

test("a file that changes during the import (lines appended after the check) is refused: exit 2, nothing written, no mark left", async () => {
  const file = exportFile(1, 20);
  const target = sqlite("appended.db");
  const program = startProgram(["server/cli.ts", "import", file, "--storage", target]);
  // The import waits after marking the store (the mark reaches every server first): append then.
  await withStore(target, async (storage) => {
    for (let i = 0; i < 3000 && (await storage.transfer?.importMark?.()) === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });
  appendFileSync(file, `${JSON.stringify({ pet: { id: 21, name: " ", categoryId: -3, status: "sold" } })}\n`);
  assert.is(await program.exited(60_000), 2, program.stderr());
  assert.match(program.stderr(), /the file changed during the import/);
  assert.equal(await idsOf(target), [], "nothing written");
  await withStore(target, async (storage) => assert.is(await storage.transfer?.importMark?.(), undefined));
});

test("a line longer than any export's (/dev/zero) is refused at once: exit 2 naming its line", async () => {
  const run = await petstore(["import", "/dev/zero", "--storage", sqlite("zero.db")]);
  assert.is(run.code, 2, run.stderr);
  assert.match(
    run.stderr,
    /^petstore import: \/dev\/zero line 1: longer than 65536 bytes: not a line of a petstore export\n$/,
  );
});

test("a pet at 2^53-1 imports (the header's next id 2^53), and the store then refuses to create past it", async () => {
  const path = join(dir, "top.ndjson");
  writeFileSync(path, exportText(MAX_ID, MAX_ID, MAX_ID + 1));
  const target = sqlite("top.db");
  const run = await petstore(["import", path, "--storage", target]);
  assert.is(run.code, 0, run.stderr);
  await withStore(target, async (storage) => {
    assert.equal((await storage.get(MAX_ID))?.id, MAX_ID);
    assert.is(await storage.transfer?.nextId(), MAX_ID + 1);
  });
});

test("paths and quoted text are printed with control and bidirectional characters escaped", async () => {
  assert.is(printable("a\u001b[2Jb\u202ec\u0085d"), "a\\u001b[2Jb\\u202ec\\u0085d");
  const name = join(dir, "evil\u001b[31m\u202e.ndjson");
  writeFileSync(name, `${JSON.stringify({ format: "petstore-export", version: 1 })}\n`);
  const run = await petstore(["import", name, "--storage", sqlite("evil.db")]);
  assert.is(run.code, 2);
  assert.not.ok(run.stderr.includes("\u001b") || run.stderr.includes("\u202e"), JSON.stringify(run.stderr));
  assert.match(run.stderr, /evil\\u001b\[31m\\u202e\.ndjson line 1/);
  const quoted = join(dir, "quoted.ndjson");
  const header = exportText(1, 1).split("\n")[0];
  writeFileSync(quoted, `${header}\n{"pet":"\u202e\u0085 x"}\n`);
  const line = await petstore(["import", quoted, "--storage", sqlite("quoted.db")]);
  assert.is(line.code, 2);
  assert.not.ok(/[\u0085\u202e]/.test(line.stderr), JSON.stringify(line.stderr));
});

for (const backend of list) {
  test(`${backend.name}: an export stops at a bad record naming its key (exit 1); --skip-invalid writes every other record and names the skipped keys`, async () => {
    const ns = `${RUN}_bad${++count}`;
    namespaces.set(backend, [...(namespaces.get(backend) ?? []), ns]);
    const storage = await backend.open(ns);
    try {
      for (let i = 1; i <= 30; i++) await storage.create({ name: `pet ${i}`, categoryId: 1, status: "sold" });
      await backend.raw?.writeValue(ns, 10, keyvJson({ id: 10, name: "", categoryId: 1, status: "sold" }));
      const spec = backend.spec(ns);
      const out = join(dir, `export-${ns}.ndjson`);
      const stopped = await petstore(["export", "--storage", spec, "--out", out]);
      assert.is(stopped.code, 1, stopped.stderr);
      assert.match(
        stopped.stderr,
        /^petstore export: storage failed: the record (pets:10|\S+::10) \(\w+\) is invalid: not a valid Pet \(name missing or invalid\); petstore export --skip-invalid writes every other record\n$/,
      );
      const skipped = await petstore(["export", "--storage", spec, "--out", out, "--skip-invalid"]);
      assert.is(skipped.code, 0, skipped.stderr);
      assert.match(skipped.stderr, /^exported 29 pets and 0 keys to /);
      assert.match(skipped.stderr, /\npetstore export: skipped 1 invalid record \(not written\): (pets:10|\S+::10)\n$/);
      const pets = readFileSync(out, "utf8")
        .split("\n")
        .filter((line) => line.startsWith('{"pet"'))
        .map((line) => JSON.parse(line).pet.id);
      assert.equal(pets, [
        ...Array.from({ length: 9 }, (_, i) => i + 1),
        ...Array.from({ length: 20 }, (_, i) => i + 11),
      ]);
      const target = sqlite(`skipped-${ns}.db`);
      const migrated = await petstore(["migrate", "--from", spec, "--to", target, "--verify", "--skip-invalid"]);
      assert.is(migrated.code, 0, migrated.stderr);
      assert.match(migrated.stdout, /^verified 29 pets, 0 keys\n$/);
    } finally {
      await storage.close();
    }
  });
}

const postgres = list.find((backend) => backend.name === "postgres");
if (postgres !== undefined) {
  test("postgres: two imports of one file into one store at once both end done, every pet written once", async () => {
    const ns = `${RUN}_twice${++count}`;
    namespaces.set(postgres, [...(namespaces.get(postgres) ?? []), ns]);
    const storage = await postgres.open(ns);
    await storage.close();
    const file = exportFile(1, 20_000);
    const spec = postgres.spec(ns);
    const runs = await Promise.all([
      petstore(["import", file, "--storage", spec]),
      petstore(["import", file, "--storage", spec]),
    ]);
    for (const run of runs) assert.is(run.code, 0, run.stderr);
    await withStore(spec, async (again) => {
      assert.is(await again.transfer?.importMark?.(), undefined, "finished");
      let n = 0;
      let after = 0;
      for (;;) {
        const page = await again.list({ after, limit: 1000 });
        n += page.length;
        if (page.length < 1000) break;
        after = (page[page.length - 1] as { id: number }).id;
      }
      assert.is(n, 20_000);
    });
  });
}

test.run();
