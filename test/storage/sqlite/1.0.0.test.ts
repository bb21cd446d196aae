/**
 * A SQLite file written by release 1.0.0 opens and serves with the current code. The file,
 * fixtures/sqlite-1.0.0.db, was made by 1.0.0 itself (fixtures/make-sqlite-1.0.0.ts says how):
 * 30 pets of every status through its `store.handle()` (names with quotes, backslashes, control
 * characters, emoji, a lone surrogate, a leading ":"; categoryIds up to 2^53-1), one of them sent
 * with an `Idempotency-Key` that 1.0.0 ignored. fixtures/sqlite-1.0.0.json holds what 1.0.0
 * answered: every pet, its pages of 7 and their `Link` headers, the file's schema. Every test
 * works on a copy of the file in a temporary folder (never on the committed one) and compares
 * the answers with that JSON.
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createPetStore, type PetStore } from "../../../lib/index.ts";
import { requireFromDriver } from "../../../lib/storage/driver.ts";
import type { PetStorage } from "../../../lib/storage/port.ts";
import { sqliteStorage } from "../../../lib/storage/sqlite/index.ts";

type Sqlite3 = typeof import("sqlite3");
type Status = "available" | "pending" | "sold";
interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: Status;
}
interface Fixture {
  version: string;
  table: string;
  token: string;
  pets: Pet[];
  idempotency: { key: string; body: { name: string; categoryId: number; status: Status }; pet: Pet };
  pages: Record<"all" | Status, { query: string; ids: number[]; link: string | null }[]>;
  file: { journalMode: string; sequence: number; indexRows: number; valueRows: number };
  schema: string[];
}

const FIXTURE_DB = fileURLToPath(new URL("../fixtures/sqlite-1.0.0.db", import.meta.url));
const fixture = JSON.parse(
  readFileSync(fileURLToPath(new URL("../fixtures/sqlite-1.0.0.json", import.meta.url)), "utf8"),
) as Fixture;
const digestOf = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const committedDigest = digestOf(FIXTURE_DB);

const s = suite("storage: a SQLite file written by 1.0.0");
const dir = mkdtempSync(join(tmpdir(), "petstore-sqlite-1.0.0-"));
const opened: { close(): Promise<unknown> }[] = [];

s.after(async () => {
  for (const store of opened) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const STATUSES: Status[] = ["available", "pending", "sold"];
const LIMIT = 7;
const auth = { authorization: `Bearer ${fixture.token}` };
/** A pet as the contract writes it: its JSON text, keys in order (1.0.0 answered exactly this). */
const text = (pet: Pet) =>
  JSON.stringify({ id: pet.id, name: pet.name, categoryId: pet.categoryId, status: pet.status });
const chunks = <T>(items: T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
const byId = (pets: Pet[]) => [...pets].sort((a, b) => a.id - b.id);

let copies = 0;
/** A fresh copy of the committed file (the committed one is only ever read). */
function copyOfFixture(): string {
  const path = join(dir, `copy-${++copies}.db`);
  copyFileSync(FIXTURE_DB, path);
  return path;
}

async function openStore(path: string): Promise<{ storage: PetStorage; store: PetStore }> {
  const storage = await sqliteStorage({ path });
  const store = createPetStore({ auth: [fixture.token], storage });
  opened.push(store);
  return { storage, store };
}

/** Every row `sql` gives on the file at `path`, through a connection of the driver's own. */
async function rowsOf(path: string, sql: string): Promise<Record<string, unknown>[]> {
  const sqlite3 = requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");
  const db = await new Promise<import("sqlite3").Database>((resolve, reject) => {
    const conn: import("sqlite3").Database = new sqlite3.Database(path, (error) =>
      error ? reject(error) : resolve(conn),
    );
  });
  try {
    return await new Promise((resolve, reject) =>
      db.all(sql, (error, rows) => (error ? reject(error) : resolve(rows as Record<string, unknown>[]))),
    );
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

/** A Keyv of @keyv/sqlite on the file, as any program may open it: Keyv's table, namespace "pets". */
async function keyvOn(path: string) {
  const { default: KeyvSqlite } = await import("@keyv/sqlite");
  const { default: Keyv } = await import("keyv");
  return new Keyv({
    store: new KeyvSqlite({ uri: `sqlite://${path}`, table: `${fixture.table}_values` }),
    namespace: "pets",
  });
}

/** A POST /v1/pets with a JSON body and the fixture's token. */
function post(store: PetStore, body: unknown, headers: Record<string, string> = {}) {
  return store.handle({
    method: "POST",
    path: "/v1/pets",
    headers: { ...auth, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/**
 * The store serves exactly `pets` (those of the fixture, and any made since): each by
 * storage.get, getPet and GET /v1/pets/{id}; pages of 7 by storage.list and over HTTP following
 * the `Link` headers, unfiltered and by each status. `links` are the `Link` headers 1.0.0 gave
 * for the same pages, checked when the store holds the fixture's pets only.
 */
async function assertServes(storage: PetStorage, store: PetStore, pets: Pet[], links?: Fixture["pages"]) {
  for (const pet of pets) {
    assert.equal(await storage.get(pet.id), pet, `storage.get(${pet.id})`);
    assert.equal(await store.getPet(pet.id), pet, `getPet(${pet.id})`);
    const answer = await store.handle({ method: "GET", path: `/v1/pets/${pet.id}`, headers: auth });
    assert.is(answer.status, 200, `GET /v1/pets/${pet.id}`);
    assert.is(answer.body, text(pet), `GET /v1/pets/${pet.id}: the text 1.0.0 answered`);
  }
  const highest = Math.max(...pets.map((pet) => pet.id));
  assert.is(await storage.get(highest + 1), undefined, "no pet past the highest id");

  for (const status of [undefined, ...STATUSES]) {
    const name = status ?? "all";
    const expected = chunks(
      byId(pets).filter((pet) => status === undefined || pet.status === status),
      LIMIT,
    );
    // storage.list, page after page by the last id.
    const listed: Pet[][] = [];
    let after = 0;
    for (;;) {
      const page = await storage.list({ status, after, limit: LIMIT });
      if (page.length === 0) break;
      listed.push(page);
      after = (page.at(-1) as Pet).id;
    }
    assert.equal(listed, expected, `storage.list pages of ${name}`);

    // GET /v1/pets?limit=7[&status=…], following each Link until there is none.
    let query = `limit=${LIMIT}${status === undefined ? "" : `&status=${status}`}`;
    for (let i = 0; i < expected.length; i++) {
      const answer = await store.handle({ method: "GET", path: "/v1/pets", query, headers: auth });
      assert.is(answer.status, 200, `GET /v1/pets?${query}`);
      assert.is(answer.body, `[${(expected[i] as Pet[]).map(text).join(",")}]`, `page ${i + 1} of ${name}`);
      const link = answer.headers.link;
      if (i === expected.length - 1) {
        assert.is(link, undefined, `the last page of ${name} has no Link`);
        break;
      }
      const lastId = (expected[i] as Pet[]).at(-1)?.id;
      if (links !== undefined) assert.is(link, links[name][i]?.link, `Link of page ${i + 1} of ${name}: 1.0.0's`);
      const next = /^<\/v1\/pets\?([^>]+)>; rel="next"$/.exec(link ?? "");
      assert.ok(next, `page ${i + 1} of ${name} (last id ${lastId}) links the next: ${link}`);
      query = next[1] as string;
    }
  }
}

s("the fixture: 1.0.0's schema, WAL mode, 30 pets of every status, nothing beside the file", async () => {
  for (const suffix of ["-wal", "-shm", "-journal"]) assert.not.ok(existsSync(`${FIXTURE_DB}${suffix}`), suffix);
  assert.is(fixture.version, "1.0.0");
  const path = copyOfFixture();
  const schema = (await rowsOf(path, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid")).map(
    (row) => (row.sql === null ? `-- ${row.type} ${row.name} on ${row.tbl_name} (automatic, no SQL)` : `${row.sql};`),
  );
  assert.equal(schema, fixture.schema, "the copy holds the schema 1.0.0 left (no idempotency table, no pet column)");
  assert.equal(await rowsOf(path, "PRAGMA journal_mode"), [{ journal_mode: "wal" }]);
  assert.equal(await rowsOf(path, "SELECT value FROM petstore_seq"), [{ value: fixture.file.sequence }]);
  // The fixture's own shape: what the tests below rely on.
  assert.equal(
    fixture.pets.map((pet) => pet.id),
    Array.from({ length: 30 }, (_, i) => i + 1),
  );
  assert.is(fixture.file.sequence, 30);
  for (const status of STATUSES)
    assert.ok(
      fixture.pets.some((pet) => pet.status === status),
      status,
    );
  assert.ok(fixture.pets.some((pet) => pet.categoryId === Number.MAX_SAFE_INTEGER));
  assert.equal(fixture.pets[fixture.idempotency.pet.id - 1], fixture.idempotency.pet);
  for (const name of ["all", ...STATUSES] as const) {
    const ids = byId(fixture.pets)
      .filter((pet) => name === "all" || pet.status === name)
      .map((pet) => pet.id);
    assert.equal(
      fixture.pages[name].map((page) => page.ids),
      chunks(ids, LIMIT),
      `1.0.0's pages of ${name}`,
    );
  }
});

s(
  "sqliteStorage and createPetStore on 1.0.0's file serve every pet and page as 1.0.0 did; so does a second open",
  async () => {
    const path = copyOfFixture();
    const first = await openStore(path);
    assert.ok(await first.store.ready());
    await assertServes(first.storage, first.store, fixture.pets, fixture.pages);
    await first.store.close();
    for (const suffix of ["-wal", "-shm"]) assert.not.ok(existsSync(`${path}${suffix}`), `${suffix} after close`);

    const tables = (await rowsOf(path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")).map(
      (row) => row.name,
    );
    assert.ok(tables.includes("petstore_idempotency"), `the open added the idempotency table: ${tables.join(", ")}`);
    // The new layout: each pet's served text beside its index entry, filled from 1.0.0's values.
    const texts = await rowsOf(path, "SELECT id, pet FROM petstore_index ORDER BY id");
    assert.equal(
      texts,
      fixture.pets.map((pet) => ({ id: pet.id, pet: JSON.stringify(pet) })),
      "the open filled every pet's served text",
    );

    const second = await openStore(path);
    await assertServes(second.storage, second.store, fixture.pets, fixture.pages);
    await second.store.close();
  },
);

s(
  "on 1.0.0's file: the key 1.0.0 ignored is new, then replays and conflicts as the contract says; ids follow the highest; again after a reopen",
  async () => {
    const path = copyOfFixture();
    const { key, body } = fixture.idempotency;
    const highest = Math.max(...fixture.pets.map((pet) => pet.id));
    assert.is(highest, fixture.file.sequence);
    const keyed: Pet = { id: highest + 1, ...body };
    const plain: Pet = { id: highest + 2, name: "After 1.0.0", categoryId: Number.MAX_SAFE_INTEGER, status: "sold" };
    const later: Pet = { id: highest + 3, name: 'After a reopen "\\', categoryId: 1, status: "available" };
    const other = { ...body, name: `${body.name} (another body)` };

    const { storage, store } = await openStore(path);
    // 1.0.0 wrote no record of the key: the first POST with it here is a create, of the next id.
    const created = await post(store, body, { "idempotency-key": key });
    assert.is(created.status, 201);
    assert.is(created.body, text(keyed));
    assert.is(created.headers.location, `/v1/pets/${keyed.id}`);
    assert.is(created.headers["idempotent-replayed"], undefined);
    assert.is.not(keyed.id, fixture.idempotency.pet.id, "not 1.0.0's pet of that key");

    const replay = async (target: PetStore) => {
      const again = await post(target, body, { "idempotency-key": key });
      assert.is(again.status, 201, "a replay answers 201");
      assert.is(again.body, text(keyed), "with the same pet");
      assert.is(again.headers.location, `/v1/pets/${keyed.id}`);
      assert.is(again.headers["idempotent-replayed"], "true");
      const reused = await post(target, other, { "idempotency-key": key });
      assert.is(reused.status, 422, "the same key with another body");
      assert.is((JSON.parse(reused.body) as { code: string }).code, "idempotency_key_reused");
    };
    await replay(store);

    const made = await post(store, { name: plain.name, categoryId: plain.categoryId, status: plain.status });
    assert.is(made.status, 201);
    assert.is(made.body, text(plain), "a plain create takes the id after the keyed one");
    await assertServes(storage, store, [...fixture.pets, keyed, plain]);
    await store.close();

    const reopened = await openStore(path);
    await replay(reopened.store);
    const after = await post(reopened.store, { name: later.name, categoryId: later.categoryId, status: later.status });
    assert.is(after.body, text(later), "after a reopen, the next id");
    await assertServes(reopened.storage, reopened.store, [...fixture.pets, keyed, plain, later]);
    await reopened.store.close();
  },
);

s(
  "a Keyv of @keyv/sqlite on 1.0.0's file reads every pet after the current code opened it, and after it closed",
  async () => {
    const path = copyOfFixture();
    const { storage, store } = await openStore(path);
    assert.equal(await storage.get(1), fixture.pets[0]);
    const keyv = await keyvOn(path);
    try {
      for (const pet of fixture.pets) assert.equal(await keyv.get(String(pet.id)), pet, `Keyv pets:${pet.id}, open`);
      await store.close();
      for (const pet of fixture.pets) assert.equal(await keyv.get(String(pet.id)), pet, `Keyv pets:${pet.id}, closed`);
    } finally {
      await keyv.disconnect();
    }
    const again = await openStore(path);
    await assertServes(again.storage, again.store, fixture.pets, fixture.pages);
    await again.store.close();
  },
);

s("the committed file was only read", () => {
  assert.is(digestOf(FIXTURE_DB), committedDigest);
  for (const suffix of ["-wal", "-shm", "-journal"]) assert.not.ok(existsSync(`${FIXTURE_DB}${suffix}`), suffix);
});

s.run();
