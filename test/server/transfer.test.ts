/**
 * Export and import in process: the file's form (header, pets in id order, keys, the end line's
 * digest), every kind of bad input refused whole with the line named and nothing written, a store
 * holding other pets refused unless merged, an export taken beside a serving store, export files in
 * the test kit, and the progress line.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { memoryStorage } from "../../lib/entries/storage.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import { sqliteStorage } from "../../lib/storage/sqlite/index.ts";
import { type ExportRecord, exportStore, ImportError, importFile, importStore } from "../../server/index.ts";
import { formatDuration, progressLine, showProgress } from "../../server/transfer/progress.ts";
import { createTestStore } from "../../testing/index.ts";
import { lineOf } from "../../transfer/format.ts";

const dir = mkdtempSync(join(tmpdir(), "petstore-transfer-"));
test.after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fileOf = (text: string) => {
  const path = join(dir, `export-${++files}.ndjson`);
  writeFileSync(path, text);
  return path;
};

/** A memory store with `n` pets and two keys. */
async function filled(n = 5): Promise<PetStorage> {
  const storage = memoryStorage();
  for (let i = 1; i <= n; i++)
    await storage.create({ name: `pet ${i}`, categoryId: i, status: i % 2 ? "available" : "sold" });
  const now = Date.now();
  for (const key of ["a-key", "b-key"]) {
    await storage.createOnce?.(
      { name: key, categoryId: 1, status: "pending" },
      { scope: "s", key, fingerprint: "f".repeat(64), now, expiresAt: now + 60_000 },
    );
  }
  return storage;
}

async function exportText(storage: PetStorage): Promise<string> {
  let text = "";
  for await (const record of exportStore(storage)) text += lineOf(record);
  return text;
}

test("an export is a header, the pets in ascending id, the live keys, and an end line with the SHA-256 of the bytes before it", async () => {
  const text = await exportText(await filled());
  const lines = text.split("\n");
  assert.is(lines.pop(), "", "the file ends with a line feed");
  const header = JSON.parse(lines[0] as string);
  assert.equal(Object.keys(header), ["format", "version", "exportedAt", "nextId", "pets", "keys"]);
  assert.is(header.format, "petstore-export");
  assert.is(header.version, 1);
  assert.ok(Math.abs(Date.parse(header.exportedAt) - Date.now()) < 10_000);
  assert.is(header.nextId, 8);
  assert.is(header.pets, 7);
  assert.is(header.keys, 2);
  assert.is(lines[1], '{"pet":{"id":1,"name":"pet 1","categoryId":1,"status":"available"}}');
  assert.equal(
    lines.slice(1, 8).map((line) => JSON.parse(line).pet.id),
    [1, 2, 3, 4, 5, 6, 7],
  );
  const key = JSON.parse(lines[8] as string).key;
  assert.equal(Object.keys(key), ["scope", "key", "fingerprint", "petId", "expiresAt"]);
  assert.equal([key.scope, key.key, key.petId], ["s", "a-key", 6]);
  const end = JSON.parse(lines[10] as string);
  const before = `${lines.slice(0, 10).join("\n")}\n`;
  assert.equal(end, { end: true, sha256: createHash("sha256").update(before).digest("hex") });
  // exportStore's records are the lines: JSON.stringify of each gives the same bytes.
  const records: ExportRecord[] = [];
  for await (const record of exportStore(await filled())) records.push(record);
  assert.is(JSON.stringify(records[1]), lines[1]);
});

test("a memory store exported and imported into another gives the same pets, keys and next id", async () => {
  const source = await filled();
  const path = fileOf(await exportText(source));
  const target = memoryStorage();
  const result = await importFile(target, path);
  assert.equal(result, { pets: 7, petsWritten: 7, petsPresent: 0, keys: 2, keysWritten: 2, keysExpired: 0, nextId: 8 });
  assert.equal(await target.list({ after: 0, limit: 100 }), await source.list({ after: 0, limit: 100 }));
  const now = Date.now();
  const replay = await target.createOnce?.(
    { name: "b-key", categoryId: 1, status: "pending" },
    { scope: "s", key: "b-key", fingerprint: "f".repeat(64), now, expiresAt: now + 60_000 },
  );
  assert.equal(replay, { pet: { id: 7, name: "b-key", categoryId: 1, status: "pending" }, replayed: true });
});

/** The lines of a good export of 3 pets and 1 key, to spoil one at a time. */
async function goodLines(): Promise<string[]> {
  const storage = memoryStorage();
  for (let i = 1; i <= 3; i++) await storage.create({ name: `pet ${i}`, categoryId: 1, status: "available" });
  const now = Date.now();
  await storage.createOnce?.(
    { name: "keyed", categoryId: 1, status: "sold" },
    { scope: "s", key: "k", fingerprint: "e".repeat(64), now, expiresAt: now + 60_000 },
  );
  return (await exportText(storage)).split("\n").slice(0, -1);
}

/** Lines joined with a correct end line (as if written by an export), so that only `spoil` is wrong. */
function sealed(lines: string[]): string {
  const body = `${lines.join("\n")}\n`;
  return `${body}${JSON.stringify({ end: true, sha256: createHash("sha256").update(body).digest("hex") })}\n`;
}

const BAD_FILES: [string, (lines: string[]) => string, RegExp][] = [
  ["an empty file", () => "", /line 1: empty: not a petstore export/],
  ["a first line that is not JSON", (l) => sealed(["hello", ...l.slice(1, -1)]), /line 1: not a petstore export/],
  [
    "another format",
    (l) => sealed([l[0]?.replace("petstore-export", "other") ?? "", ...l.slice(1, -1)]),
    /line 1: not a petstore export/,
  ],
  [
    "a newer version",
    (l) => sealed([l[0]?.replace('"version":1', '"version":2') ?? "", ...l.slice(1, -1)]),
    /line 1: version 2 .* not one this petstore reads/,
  ],
  ["a file cut short", (l) => `${l.slice(0, 3).join("\n")}\n`, /line 3: no end line: the file was cut short/],
  ["a line cut in the middle", (l) => `${l.slice(0, 2).join("\n")}\n${l[2]?.slice(0, 20)}`, /line 3: not JSON/],
  [
    "a pet changed after the export",
    (l) => `${[l[0], l[1]?.replace("pet 1", "pet X"), ...l.slice(2)].join("\n")}\n`,
    /line 7: the digest does not match/,
  ],
  [
    "pets out of order",
    (l) => sealed([l[0] ?? "", l[2] ?? "", l[1] ?? "", ...l.slice(3, -1)]),
    /line 3: pet 1 is not above the pet before it \(2\)/,
  ],
  [
    "an invalid pet",
    (l) => sealed([l[0] ?? "", l[1]?.replace('"pet 1"', `"${"n".repeat(201)}"`) ?? "", ...l.slice(2, -1)]),
    /line 2: not a valid Pet/,
  ],
  [
    "a pet with another field",
    (l) => sealed([l[0] ?? "", l[1]?.replace('"status"', '"owner":1,"status"') ?? "", ...l.slice(2, -1)]),
    /line 2: not a valid Pet/,
  ],
  [
    "a key of a pet not in the file",
    (l) => sealed([...l.slice(0, -1).map((x) => x.replace('"petId":4', '"petId":9'))]),
    /line 6: the key names pet 9, which is not in the file/,
  ],
  [
    "a key given twice",
    (l) => sealed([l[0]?.replace('"keys":1', '"keys":2') ?? "", ...l.slice(1, -1), l[5] ?? ""]),
    /line 7: a key given twice/,
  ],
  [
    "a pet after the keys",
    (l) =>
      sealed([
        l[0] ?? "",
        l[1] ?? "",
        l[2] ?? "",
        l[5]?.replace('"petId":4', '"petId":1') ?? "",
        l[3] ?? "",
        l[4] ?? "",
      ]),
    /line 5: a pet after the keys/,
  ],
  [
    "counts that differ from the header",
    (l) => sealed([l[0]?.replace('"pets":4', '"pets":5') ?? "", ...l.slice(1, -1)]),
    /the header says 5 pets and 1 keys; the file holds 4 and 1/,
  ],
  [
    "a nextId not above every pet",
    (l) => sealed([l[0]?.replace('"nextId":5', '"nextId":3') ?? "", ...l.slice(1, -1)]),
    /line 1: the header's nextId 3 is not above the last pet's id 4/,
  ],
  ["a blank line among the pets", (l) => sealed([l[0] ?? "", "", ...l.slice(1, -1)]), /line 2: not JSON/],
  ["a line after the end line", (l) => `${l.join("\n")}\n${l[1]}\n`, /line 8: a line after the end line/],
];

for (const [what, spoil, message] of BAD_FILES) {
  test(`import refuses ${what}: exit-2 error naming the line, nothing written`, async () => {
    const lines = await goodLines();
    assert.is(lines.length, 7, "header, 4 pets, 1 key, end");
    const path = fileOf(spoil(lines));
    const target = memoryStorage();
    await target.create({ name: "already there", categoryId: 1, status: "available" });
    try {
      await importFile(target, path, { merge: true });
      assert.unreachable("refused");
    } catch (error) {
      assert.instance(error, ImportError);
      assert.match((error as Error).message, message);
      assert.ok((error as Error).message.startsWith(path), "the message names the file");
    }
    assert.equal(
      (await target.list({ after: 0, limit: 10 })).map((p) => p.name),
      ["already there"],
      "nothing written",
    );
    assert.is(await target.transfer?.nextId(), 2, "not even the sequence");
  });
}

test("a store that holds pets not in the file is refused unless merge; a pet of the same id that differs always", async () => {
  const path = fileOf(sealed((await goodLines()).slice(0, -1)));
  const other = memoryStorage();
  await other.transfer?.putPets([{ id: 10, name: "mine", categoryId: 1, status: "sold" }]);
  try {
    await importFile(other, path);
    assert.unreachable("refused");
  } catch (error) {
    assert.instance(error, ImportError);
    assert.match(
      (error as Error).message,
      /the store holds 1 pet not in the input \(id 10\): import into an empty store, or merge \(--merge\) to keep them; nothing written/,
    );
  }
  assert.is((await other.list({ after: 0, limit: 10 })).length, 1);
  const merged = await importFile(other, path, { merge: true });
  assert.is(merged.petsWritten, 4);
  assert.equal(
    (await other.list({ after: 0, limit: 10 })).map((p) => p.id),
    [1, 2, 3, 4, 10],
  );
  assert.ok((await other.create({ name: "new", categoryId: 1, status: "sold" })).id > 10);

  const clash = memoryStorage();
  await clash.transfer?.putPets([{ id: 2, name: "not pet 2", categoryId: 1, status: "available" }]);
  try {
    await importFile(clash, path, { merge: true });
    assert.unreachable("refused");
  } catch (error) {
    assert.match((error as Error).message, /pet 2 in the store is not the pet of line 3: nothing written/);
  }
  assert.is((await clash.list({ after: 0, limit: 10 })).length, 1);
});

test("importStore takes the records exportStore yields, and refuses records that are not a whole export", async () => {
  const source = await filled(3);
  const target = memoryStorage();
  await importStore(target, exportStore(source));
  assert.equal(await target.list({ after: 0, limit: 10 }), await source.list({ after: 0, limit: 10 }));
  const records: ExportRecord[] = [];
  for await (const record of exportStore(source)) records.push(record);
  try {
    await importStore(memoryStorage(), records.slice(0, -1));
    assert.unreachable("refused");
  } catch (error) {
    assert.match((error as Error).message, /^record 8: no end line/);
  }
});

test("an export taken while a store serves creates holds every pet acknowledged before it started, and imports whole", async () => {
  const path = join(dir, "serving.db");
  const storage = await sqliteStorage({ path });
  try {
    for (let i = 0; i < 1500; i++) await storage.create({ name: `before ${i}`, categoryId: 1, status: "available" });
    let creating = true;
    const creates = (async () => {
      let n = 0;
      while (creating) {
        await storage.create({ name: `during ${n++}`, categoryId: 2, status: "sold" });
      }
      return n;
    })();
    const records: ExportRecord[] = [];
    for await (const record of exportStore(storage)) records.push(record);
    creating = false;
    const during = await creates;
    assert.ok(during > 0, "creates ran during the export");
    const names = records.flatMap((r) => ("pet" in r ? [r.pet.name] : []));
    for (let i = 0; i < 1500; i++) assert.is(names[i], `before ${i}`);
    const target = memoryStorage();
    const result = await importStore(target, records);
    assert.is(result.pets, names.length);
  } finally {
    await storage.close();
  }
});

test("the test kit takes an export file as pets: its pets at their ids, its keys, again after reset()", async () => {
  const source = memoryStorage();
  await source.transfer?.putPets([
    { id: 4, name: "Rex", categoryId: 1, status: "available" },
    { id: 9, name: "Mia", categoryId: 2, status: "sold" },
  ]);
  const path = fileOf(await exportText(source));
  const t = await createTestStore({ pets: path });
  try {
    const first = await t.request("GET", "/v1/pets/9");
    assert.is(first.status, 200);
    assert.equal(first.json, { id: 9, name: "Mia", categoryId: 2, status: "sold" });
    const created = await t.request("POST", "/v1/pets", { body: { name: "New", categoryId: 1 } });
    assert.is((created.json as { id: number }).id, 10);
    await t.reset();
    assert.is((await t.request("GET", "/v1/pets/10")).status, 404);
    assert.is((await t.request("GET", "/v1/pets/4")).status, 200);
  } finally {
    await t.close();
  }
  try {
    await createTestStore({ pets: join(dir, "missing.ndjson") });
    assert.unreachable("a missing file is refused");
  } catch (error) {
    assert.match(String(error), /ENOENT/);
  }
});

test("progress: a line rewritten in place on a terminal, a plain line every 10 s elsewhere, nothing when quiet", () => {
  assert.is(
    progressLine("import", "pets and keys", 45_000, 110_000, 10_000),
    "import: 45,000 of 110,000 pets and keys (40%), 4,500/s, 14 s left",
  );
  assert.is(progressLine("export", "pets and keys", 10, 10, 2_000), "export: 10 of 10 pets and keys (100%), 5/s");
  assert.is(formatDuration(200), "3 min 20 s");
  assert.is(formatDuration(7500), "2 h 5 min");
  let clock = 0;
  const now = () => clock;
  const plain: string[] = [];
  const log = showProgress("import", "pets", 100, { stream: { write: (t: string) => plain.push(t) }, now });
  for (clock = 1000; clock <= 25_000; clock += 1000) log.update(clock / 250);
  log.end();
  assert.equal(plain, [
    "import: 40 of 100 pets (40%), 4/s, 15 s left\n",
    "import: 80 of 100 pets (80%), 4/s, 5 s left\n",
  ]);
  const drawn: string[] = [];
  clock = 0;
  const tty = showProgress("import", "pets", 100, {
    stream: { write: (t: string) => drawn.push(t), isTTY: true },
    now,
  });
  tty.update(10);
  clock = 150;
  tty.update(20);
  clock = 200;
  tty.update(30); // within 100 ms of the last: not drawn
  tty.end();
  assert.equal(drawn, [
    "\rimport: 20 of 100 pets (20%), 133/s, 1 s left\x1b[K",
    "\rimport: 30 of 100 pets (30%), 150/s, 0 s left\x1b[K",
    "\n",
  ]);
  const quiet: string[] = [];
  const none = showProgress("import", "pets", 100, {
    stream: { write: (t: string) => quiet.push(t), isTTY: true },
    quiet: true,
    now,
  });
  none.update(50);
  none.end();
  assert.equal(quiet, []);
});

test.run();
