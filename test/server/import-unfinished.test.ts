/**
 * Moving data without losing any (issue 56, contract 1.4): an import stopped part-way (Ctrl-C,
 * SIGKILL) leaves its store marked as unfinished: readiness says so, creates answer 503 while reads
 * and the replays of keys already imported are served, and the same import run again finishes it;
 * `petstore import --abandon` undoes it instead. On SQLite, Redis, Redis Cluster and Postgres,
 * with the command in a child process as an operator runs it.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { fingerprintOf, scopeOf } from "../../lib/idempotency.ts";
import { createPetStore, type PetStore } from "../../lib/index.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import { exportStore } from "../../server/index.ts";
import { type Backend, backends } from "../storage/backends.ts";
import { RUN } from "../storage/services.ts";
import { runProgram, startProgram } from "../support/program.ts";

const test = suite("an unfinished import");
const dir = mkdtempSync(join(tmpdir(), "petstore-unfinished-"));
const TOKEN = "unfinished-import-key-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const petstore = (args: string[]) => runProgram(["server/cli.ts", ...args], {}, 180_000);

const list = backends("an unfinished import", { memory: false });
const namespaces = new Map<Backend, string[]>();
const opened: PetStorage[] = [];
let count = 0;
test.after(async () => {
  await Promise.all(opened.splice(0).map((storage) => storage.close().catch(() => {})));
  for (const [backend, names] of namespaces) await backend.cleanup(names);
  rmSync(dir, { recursive: true, force: true });
});

/** A namespace of its own on `backend`. */
function namespace(backend: Backend): string {
  const ns = `${RUN}_unf${++count}`;
  namespaces.set(backend, [...(namespaces.get(backend) ?? []), ns]);
  return ns;
}

/**
 * The test's own view of the store: it walks 100,000 pets while an import writes them, on a loaded
 * machine, so its calls get time (the default 2 s makes a Redis socket time out after 1.3 s
 * without a byte); the behaviour it checks does not depend on how fast they answer.
 */
async function open(backend: Backend, ns: string): Promise<PetStorage> {
  const storage = await backend.open(ns, { operationTimeoutMs: 30_000 });
  opened.push(storage);
  return storage;
}

/** The pet of id `id` in the test files. */
const petOf = (id: number) => ({ id, name: `pet ${id}`, categoryId: 1 + (id % 9), status: "available" as const });

/**
 * An export file of the pets `first`…`last` and a key record for each of the first `keys` of them
 * (scoped to TOKEN, replaying its pet), written as `petstore export` writes one.
 */
function exportFile(first: number, last: number, keys: number): string {
  const expiresAt = Date.now() + 86_400_000;
  const lines = [
    JSON.stringify({
      format: "petstore-export",
      version: 1,
      exportedAt: new Date().toISOString(),
      nextId: last + 1,
      pets: last - first + 1,
      keys,
    }),
  ];
  for (let id = first; id <= last; id++) lines.push(JSON.stringify({ pet: petOf(id) }));
  const records = [];
  for (let id = first; id < first + keys; id++) {
    const { name, categoryId, status } = petOf(id);
    const fingerprint = fingerprintOf({ name, categoryId, status });
    records.push({ scope: scopeOf(TOKEN), key: `order-${id}`, fingerprint, petId: id, expiresAt });
  }
  records.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const key of records) lines.push(JSON.stringify({ key }));
  const body = `${lines.join("\n")}\n`;
  const path = join(dir, `export-${first}-${last}-${++count}.ndjson`);
  writeFileSync(
    path,
    `${body}${JSON.stringify({ end: true, sha256: createHash("sha256").update(body).digest("hex") })}\n`,
  );
  return path;
}

/** Waits until the store holds a pet above `after`: the import is writing its pets. */
async function untilWriting(storage: PetStorage, program: ReturnType<typeof startProgram>, after = 0): Promise<void> {
  for (let i = 0; i < 6000; i++) {
    if (program.child.exitCode !== null) throw new Error(`the import ended first:\n${program.stderr()}`);
    if ((await storage.list({ after, limit: 1 })).length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error("the import wrote no pet in 30 s");
}

/**
 * Waits until `store` reports ready (a finished import's mark is gone from the storage, and the
 * store reads it again within MARK_READ_EVERY_MS): polled, bounded generously for a loaded machine.
 */
async function untilReady(store: PetStore, ms = 30_000): Promise<void> {
  const until = performance.now() + ms;
  let last = await store.readiness();
  while (!last.ready && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    last = await store.readiness();
  }
  assert.equal(last, { ready: true }, `still not ready after ${ms} ms`);
}

/** A create with the test files' key `order-<id>` and that pet's fields. */
const createKeyed = (store: PetStore, id: number) => {
  const { name, categoryId, status } = petOf(id);
  return store.handle({
    method: "POST",
    path: "/v1/pets",
    headers: { ...AUTH, "content-type": "application/json", "idempotency-key": `order-${id}` },
    body: JSON.stringify({ name, categoryId, status }),
  });
};
const createPlain = (store: PetStore) =>
  store.handle({
    method: "POST",
    path: "/v1/pets",
    headers: { ...AUTH, "content-type": "application/json" },
    body: '{"name":"Late","categoryId":1}',
  });

/** Every pet of the store, walked a page at a time. */
async function countPets(storage: PetStorage): Promise<number> {
  let n = 0;
  let after = 0;
  for (;;) {
    const page = await storage.list({ after, limit: 1000 });
    n += page.length;
    const last = page[page.length - 1];
    if (page.length < 1000 || last === undefined) return n;
    after = last.id;
  }
}

/** What an export of the store says, but when it was taken. */
async function snapshot(storage: PetStorage): Promise<string[]> {
  const lines: string[] = [];
  for await (const record of exportStore(storage)) {
    if ("format" in record) lines.push(JSON.stringify({ ...record, exportedAt: "" }));
    else if (!("end" in record)) lines.push(JSON.stringify(record));
  }
  return lines;
}

const PETS = 100_000;
const KEYS = 200;

for (const backend of list) {
  test(`${backend.name}: an import stopped by Ctrl-C or killed leaves the store unfinished (readiness 503, creates 503, reads and imported keys served); run again, it finishes every pet and key`, async () => {
    const file = exportFile(1, PETS, KEYS);
    for (const signal of ["SIGINT", "SIGKILL"] as const) {
      const ns = namespace(backend);
      const storage = await open(backend, ns);
      const spec = backend.spec(ns);
      const program = startProgram(["server/cli.ts", "import", file, "--storage", spec]);
      try {
        await untilWriting(storage, program);
        program.child.kill(signal);
        const code = await program.exited(30_000);
        if (signal === "SIGINT") {
          assert.is(code, 130, program.stderr());
          assert.match(
            program.stderr(),
            /petstore import: stopped \(Ctrl-C\): the import is unfinished .*run the same command again to finish it, or undo it with petstore import --abandon\n$/,
          );
        }
      } finally {
        await program.kill();
      }
      const written = await countPets(storage);
      assert.ok(written > 0 && written < PETS, `stopped part-way (${written} written)`);

      const store = createPetStore({ storage, auth: [TOKEN], onError: () => {} });
      const readiness = await store.readiness();
      assert.equal(readiness, {
        ready: false,
        reason: "an import is unfinished: run it again or petstore import --abandon",
      });
      const refused = await createPlain(store);
      assert.is(refused.status, 503, refused.body as string);
      assert.is(JSON.parse(String(refused.body)).code, "storage_unavailable");
      assert.ok(refused.headers["retry-after"], "Retry-After");
      const replay = await createKeyed(store, 1);
      assert.is(replay.status, 201, "a retried create of an imported key replays its pet");
      assert.is(replay.headers["idempotent-replayed"], "true");
      assert.is(JSON.parse(String(replay.body)).id, 1);
      assert.is((await createKeyed(store, PETS)).status, 503, "a key the import has not reached yet waits");
      assert.is((await store.handle({ method: "GET", path: "/v1/pets/1", headers: AUTH })).status, 200, "reads served");

      const again = await petstore(["import", file, "--storage", spec]);
      assert.is(again.code, 0, again.stderr);
      // Its last line sums it up (a run of more than ~10 s prints plain progress lines before it).
      const summary = again.stderr.trimEnd().split("\n").at(-1) ?? "";
      assert.match(summary, /^imported \d+ pets \(\d+ already there\) and \d+ keys/, again.stderr);
      for (const line of again.stderr.trimEnd().split("\n").slice(0, -1)) {
        assert.match(line, /^import: [\d,]+ of [\d,]+ pets and keys/, again.stderr);
      }
      assert.is(await countPets(storage), PETS);
      await untilReady(store); // the store reads the mark again
      const late = await createPlain(store);
      assert.is(late.status, 201, late.body as string);
      assert.is(JSON.parse(String(late.body)).id, PETS + 1);
      const lastKey = await createKeyed(store, KEYS);
      assert.is(lastKey.headers["idempotent-replayed"], "true", "every key was imported");
      assert.is(JSON.parse(String(lastKey.body)).id, KEYS);
      await store.close();
    }
  });

  test(`${backend.name}: petstore import --abandon undoes an unfinished import: the store is as it was before, its sequence too`, async () => {
    const ns = namespace(backend);
    const storage = await open(backend, ns);
    const spec = backend.spec(ns);
    const store = createPetStore({ storage, auth: [TOKEN], onError: () => {} });
    for (let i = 0; i < 3; i++) await store.createPet({ name: `before ${i}`, categoryId: 1 });
    await store.createPet({ name: "keyed", categoryId: 2 }, { idempotencyKey: "before-key", scope: scopeOf(TOKEN) });
    const before = await snapshot(storage);
    const file = exportFile(1000, 1000 + PETS - 1, KEYS);
    const program = startProgram(["server/cli.ts", "import", file, "--merge", "--storage", spec]);
    try {
      await untilWriting(storage, program, 4);
      program.child.kill("SIGKILL");
      await program.exited(30_000);
    } finally {
      await program.kill();
    }
    assert.ok((await countPets(storage)) > 4, "it wrote some pets");
    const undo = await petstore(["import", "--abandon", "--storage", spec]);
    assert.is(undo.code, 0, undo.stderr);
    assert.match(
      undo.stderr,
      /^abandoned the import started \S+: removed \d+ pets and \d+ keys it wrote; the next id is 5 again\n$/,
    );
    assert.equal(await snapshot(storage), before, "pets, keys and the next id as before");
    await untilReady(store);
    const nothing = await petstore(["import", "--abandon", "--storage", spec]);
    assert.is(nothing.code, 0);
    assert.match(nothing.stderr, /no unfinished import in this store: nothing to undo/);
    await store.close();
  });
}

test.run();
