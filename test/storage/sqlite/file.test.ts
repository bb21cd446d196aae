/**
 * The SQLite file under a running server (contract 1.3, "Faults stay local"): SQLite keeps the file
 * it opened, so a database file removed, replaced (another renamed over it) or truncated would take
 * writes no later process finds. The storage compares the file at the path with the one it has open
 * (device and inode) and checks it is whole: otherwise `ready()` (`/readyz`) is false, creates and
 * reads answer 503 storage_unavailable, and onError hears it once, with the path.
 */
import { mkdtempSync, renameSync, rmSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Pet } from "../../../lib/entries/schemas.ts";
import type { PetStore } from "../../../lib/index.ts";
import { createPetStore, isPetStoreError } from "../../../lib/index.ts";
import { sqliteStorage } from "../../../lib/storage/sqlite/index.ts";
import { call as fetchCall, mixedLoad, KEY as SERVER_KEY, sleep, tally, unreadable } from "../../faults/support.ts";
import { call, errorOf, KEY } from "../../support/helpers.ts";
import { jsonLines, spawnServer, startedUrl } from "../../support/server-child.ts";

const s = suite("storage: sqlite file under a running server");
const dir = mkdtempSync(join(tmpdir(), "petstore-sqlite-file-"));
s.after(() => rmSync(dir, { recursive: true, force: true }));

let made = 0;
const stores: PetStore[] = [];
s.after.each(async () => {
  for (const store of stores.splice(0)) await store.close();
});

/** A store on a new file (or `path`), every onError kept. */
async function open(path = join(dir, `${++made}.db`)) {
  const errors: unknown[] = [];
  const store = createPetStore({ auth: [KEY], storage: await sqliteStorage({ path }), onError: (e) => errors.push(e) });
  stores.push(store);
  /** The reports of the file's problems (other reports, such as the breaker's, left out). */
  // Each reported as the outage it is: a storage_unavailable PetStoreError with the file's problem as cause.
  const fileReports = () =>
    errors
      .map((e) => (isPetStoreError(e, "storage_unavailable") ? e.cause : e))
      .filter((e) => e instanceof Error && e.message.startsWith("sqlite storage: the database file"));
  return { path, store, fileReports };
}

const create = (store: PetStore, name = "Rex") =>
  call(store, "POST", "/v1/pets", { body: JSON.stringify({ name, categoryId: 1 }) });

/** Creates, a page and a pet, each answered 503 storage_unavailable. */
async function assertUnavailable(store: PetStore) {
  for (const res of [
    await create(store),
    await call(store, "GET", "/v1/pets"),
    await call(store, "GET", "/v1/pets/1"),
  ]) {
    assert.is(res.status, 503, res.body);
    assert.is(errorOf(res).code, "storage_unavailable");
  }
  assert.is(await store.ready(), false);
}

/** The file's problem was reported once, naming the path and saying what happened (`what`: /was removed/, …). */
function assertReportedOnce(fileReports: () => unknown[], path: string, what: RegExp) {
  const reports = fileReports() as Error[];
  assert.is(reports.length, 1, "reported once");
  assert.ok(reports[0]?.message.includes(path), reports[0]?.message);
  assert.match(reports[0]?.message ?? "", what);
}

s(
  "sqlite file removed: ready() is false, creates and reads answer 503 storage_unavailable, reported once with the path",
  async () => {
    const { path, store, fileReports } = await open();
    assert.is((await create(store)).status, 201);
    assert.is(await store.ready(), true);
    rmSync(path);
    await assertUnavailable(store);
    for (let i = 0; i < 5; i++) assert.is((await create(store)).status, 503);
    await sleep(150);
    await assertUnavailable(store);
    assertReportedOnce(fileReports, path, /was removed/);
  },
);

s(
  "sqlite file replaced (another database renamed over it): ready() is false, creates and reads answer 503, reported once with the path",
  async () => {
    const { path, store, fileReports } = await open();
    assert.is((await create(store)).status, 201);
    const other = await sqliteStorage({ path: join(dir, "other.db") });
    await other.create({ name: "Other", categoryId: 2, status: "sold" });
    await other.close();
    renameSync(join(dir, "other.db"), path);
    await assertUnavailable(store);
    for (let i = 0; i < 5; i++) assert.is((await create(store)).status, 503);
    assertReportedOnce(fileReports, path, /was replaced/);
  },
);

s(
  "sqlite file truncated: ready() is false, creates and reads answer 503, reported once with the path, and it stays so",
  async () => {
    const { path, store, fileReports } = await open();
    for (let i = 0; i < 20; i++) assert.is((await create(store, `pet ${i}`)).status, 201);
    truncateSync(path, 0);
    await assertUnavailable(store);
    truncateSync(path, 8192); // whole pages again, but not the pages it had
    await sleep(150);
    await assertUnavailable(store);
    assertReportedOnce(fileReports, path, /was truncated/);
  },
);

s(
  "sqlite file moved away and back: 503 while away, the same store answers again once it is back, and every acknowledged pet is there after a restart",
  async () => {
    const { path, store, fileReports } = await open();
    const acked: Pet[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await create(store, `before ${i}`);
      assert.is(res.status, 201);
      acked.push(JSON.parse(res.body));
    }
    renameSync(path, `${path}.away`);
    await assertUnavailable(store);
    renameSync(`${path}.away`, path);
    await sleep(150);
    assert.is(await store.ready(), true);
    const res = await create(store, "after");
    assert.is(res.status, 201);
    acked.push(JSON.parse(res.body));
    assert.is(fileReports().length, 1);
    await store.close();

    const again = await open(path);
    const page = await call(again.store, "GET", "/v1/pets", { query: "limit=100" });
    assert.equal(JSON.parse(page.body), acked, "every 201, and nothing else");
  },
);

s(
  "standalone server, sqlite file removed under load: /readyz 503, every create begun after it answered 503 storage_unavailable, one log line with the path; moved back, every 201 is there after a restart",
  async () => {
    const path = join(dir, "served.db");
    const start = async () => {
      const child = spawnServer({
        PORT: "0",
        PETSTORE_API_KEYS: SERVER_KEY,
        PETSTORE_STORAGE: `sqlite:${path}`,
        LOG_LEVEL: "info",
      });
      const url = await startedUrl(child);
      return { child, base: url.href.replace(/\/$/, ""), origin: url.origin };
    };
    const { child, base, origin } = await start();
    try {
      const acked = new Map<number, Pet>();
      const load = mixedLoad(base, acked, 6);
      await sleep(500);
      renameSync(path, `${path}.away`);
      const awayAt = performance.now();
      await sleep(1500);
      assert.is((await fetchCall(`${origin}/readyz`, { auth: false })).status, 503);
      const away = await fetchCall(`${base}/pets`, { method: "POST", body: '{"name":"away","categoryId":1}' });
      assert.is(away.status, 503);
      assert.is((away as { code?: string }).code, "storage_unavailable");
      renameSync(`${path}.away`, path);
      const backAt = performance.now();
      await sleep(500);
      await load.stop();
      const summary = JSON.stringify(tally(load.results));
      const whileAway = load.results.filter(
        (r) => r.op === "create" && r.startedAt > awayAt && r.startedAt + r.outcome.ms < backAt,
      );
      assert.ok(whileAway.length > 5, `creates were tried while away: ${summary}`);
      for (const r of whileAway) assert.is(r.outcome.status, 503, `no 201 while the file is away: ${summary}`);
      assert.is((await fetchCall(`${origin}/readyz`, { auth: false })).status, 200);
      // The report itself (the breaker's own line, when it opens, names the same cause).
      const logged = jsonLines(child.stdout()).filter((line) =>
        String((line.err as { message?: unknown } | undefined)?.message).includes(`${path} was removed`),
      );
      assert.is(logged.length, 1, `logged once: ${JSON.stringify(logged)}`);

      child.process.kill("SIGTERM");
      assert.is(await child.exited(), 0);
      const again = await start();
      try {
        assert.equal(await unreadable(again.base, acked), [], "every acknowledged pet is there after a restart");
      } finally {
        again.child.process.kill("SIGTERM");
        await again.child.exited();
      }
    } finally {
      await child.stop();
    }
  },
);

s.run();
