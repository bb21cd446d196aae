/**
 * The same mock in the browser: msw/browser's service worker (mockServiceWorker.js, written by
 * `npx msw init examples/msw --no-save`) hands the page's requests to the handlers, so the page's
 * own API code is answered by the test store in the page. The page shows what it got (`window.petStoreDemo`).
 */
import { setupWorker } from "msw/browser";
import { addPet, listPets } from "./api.ts";
import { KEY, petStoreMock } from "./mocks.ts";

const { store, handlers } = await petStoreMock();
await setupWorker(...handlers).start({ serviceWorker: { url: "./mockServiceWorker.js" }, quiet: true });

const first = await listPets(KEY);
const added = await addPet(KEY, { name: "Nemo", categoryId: 4 }, "add-nemo-1");
const retried = await addPet(KEY, { name: "Nemo", categoryId: 4 }, "add-nemo-1");
const afterAdd = (await listPets(KEY, 10)).names;
store.failNext(1, { status: 503 });
const outage = await listPets(KEY).catch((error: Error) => error.message);
store.delay(100);
const started = performance.now();
await listPets(KEY);
const delayedMs = Math.round(performance.now() - started);
await store.reset();
const afterReset = (await listPets(KEY, 10)).names;

const demo = { first, added, retried, afterAdd, outage, delayedMs, afterReset };
// The page's DOM, typed here: the repository type-checks for Node (no "dom" lib).
const page = globalThis as unknown as {
  document: { getElementById(id: string): { textContent: string } };
  petStoreDemo: unknown;
};
page.document.getElementById("result").textContent = JSON.stringify(demo, null, 2);
page.petStoreDemo = demo;
