/**
 * lib/storage/import-watch.ts: a store's watch over an unfinished import's mark. Readiness tells a
 * finished import at its first probe once the last read of the mark is due again, and the first
 * create then is not refused on a stale read; a store found unmarked still answers creates while
 * its next read of the mark hangs.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { memoryStorage } from "../../lib/entries/storage.ts";
import { createPetStore } from "../../lib/index.ts";
import { MARK_READ_EVERY_MS, UNFINISHED_IMPORT } from "../../lib/storage/import-watch.ts";
import type { ImportMark, PetStorage, StorageTransfer } from "../../lib/storage/port.ts";

const KEY = "import-watch-key";
const MARK: ImportMark = { input: "0".repeat(64), startedAt: new Date(0).toISOString(), lastId: 0, pets: [] };

/** Memory storage that keeps a mark, read through `read` (by default: the mark as set). */
function markedStorage(read?: (mark: ImportMark | undefined) => Promise<ImportMark | undefined>) {
  const storage = memoryStorage();
  const state: { mark: ImportMark | undefined; reads: number } = { mark: undefined, reads: 0 };
  const transfer: StorageTransfer = {
    ...(storage.transfer as StorageTransfer),
    importMark: () => {
      state.reads++;
      return read === undefined ? Promise.resolve(state.mark) : read(state.mark);
    },
    setImportMark: async (mark) => {
      state.mark = mark;
    },
    undoImport: async () => ({ pets: 0, keys: 0 }),
  };
  return { storage: { ...storage, transfer } as PetStorage, state };
}

const create = (store: ReturnType<typeof createPetStore>) =>
  store.handle({
    method: "POST",
    path: "/v1/pets",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: '{"name":"Rex","categoryId":1}',
  });

/** Until the mark read last is due to be read again. */
const untilDue = () => new Promise((resolve) => setTimeout(resolve, MARK_READ_EVERY_MS + 50));

test("once the import's mark is cleared, the first readiness probe after the last read is due says ready", async () => {
  const { storage, state } = markedStorage();
  const store = createPetStore({ storage, auth: [KEY], onError: () => {} });
  state.mark = MARK;
  assert.equal(await store.readiness(), { ready: false, reason: UNFINISHED_IMPORT });
  assert.is(await store.ready(), false);
  state.mark = undefined;
  await untilDue();
  assert.equal(await store.readiness(), { ready: true });
  state.mark = MARK;
  await untilDue();
  assert.equal(await store.readiness(), { ready: false, reason: UNFINISHED_IMPORT }, "a new mark likewise");
  await store.close();
});

test("the first create after the import finished is stored, not refused on the stale mark", async () => {
  const { storage, state } = markedStorage();
  const store = createPetStore({ storage, auth: [KEY], onError: () => {} });
  state.mark = MARK;
  const refused = await create(store);
  assert.is(refused.status, 503, String(refused.body));
  state.mark = undefined;
  await untilDue();
  const created = await create(store);
  assert.is(created.status, 201, String(created.body));
  await store.close();
});

test("a store found unmarked answers creates while its next read of the mark hangs", async () => {
  let hang = false;
  const { storage, state } = markedStorage((mark) => (hang ? new Promise(() => {}) : Promise.resolve(mark)));
  const store = createPetStore({ storage, auth: [KEY], onError: () => {} });
  assert.is((await create(store)).status, 201);
  hang = true;
  await untilDue();
  // The read never answers (and memory storage has no time-out): a create that waited on it would hang.
  let timer: NodeJS.Timeout | undefined;
  const answer = await Promise.race([
    create(store),
    new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, 10_000, undefined);
    }),
  ]);
  clearTimeout(timer);
  assert.is(answer?.status, 201, "answered without waiting on the hanging read");
  assert.is(state.reads, 2, "the next read was asked for");
  await store.close();
});

test.run();
