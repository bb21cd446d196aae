/**
 * The page of test/browser/bundle.test.ts, bundled for the browser: the core on memory storage, the
 * fetch adapter, the test kit's browser build, the msw helper and the conformance cases, all in the
 * page (no server), with the hooks the test calls through `globalThis.petstore`.
 */
import { createFetchHandler } from "../../adapters/fetch.ts";
import { petStoreHandlers } from "../../adapters/msw.ts";
import type { FetchTarget } from "../../conformance/index.ts";
import { conformanceCases } from "../../conformance/index.ts";
import { memoryStorage } from "../../lib/entries/storage.ts";
import { createPetStore } from "../../lib/index.ts";
import { createTestStore } from "../../testing/browser.ts";

const KEY = "page-key";
const ORIGIN = "https://shop.example";

/** Every published case against `createFetchHandler(store)` in the page: name → error message ("" when it passed). */
async function runConformance(): Promise<Record<string, string>> {
  let handler: (request: Request) => Promise<Response> = () => Promise.reject(new Error("no store yet"));
  const target: FetchTarget = {
    basePath: "/v1",
    key: KEY,
    cors: { origin: ORIGIN },
    reset() {
      handler = createFetchHandler(
        createPetStore({ storage: memoryStorage(), auth: [KEY], cors: { origins: [ORIGIN] } }),
      );
    },
    fetch: (request) => handler(request),
  };
  const results: Record<string, string> = {};
  for (const c of conformanceCases()) {
    try {
      await c.run(target);
      results[c.name] = "";
    } catch (error) {
      results[c.name] = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
  }
  return results;
}

/** The test kit in the page: seeding, sequential ids, failNext, delay and reset, as `request()` sees them. */
async function runTestKit() {
  const t = await createTestStore({ pets: 2, requestIds: "sequential" });
  const names = async () => ((await t.request("GET", "/v1/pets")).json as { name: string }[]).map((p) => p.name);
  const seeded = await names();
  const created = (await t.request("POST", "/v1/pets", { body: { name: "Page Rex", categoryId: 3 } })).status;
  const afterCreate = await names();
  t.failNext(1, { status: 503 });
  const failed = await t.request("GET", "/v1/pets");
  t.delay(50);
  const started = performance.now();
  await t.request("GET", "/v1/pets/1");
  const delayedMs = performance.now() - started;
  await t.reset();
  const afterReset = await t.request("GET", "/v1/pets");
  await t.close();
  return {
    seeded,
    created,
    afterCreate,
    failed: [failed.status, failed.headers["retry-after"]],
    delayedMs,
    afterReset: [(afterReset.json as unknown[]).length, afterReset.headers["x-request-id"]],
    mswHandlers: petStoreHandlers(t, { baseUrl: "https://api.example/v1" }).length,
  };
}

(globalThis as { petstore?: unknown }).petstore = { runConformance, runTestKit };
