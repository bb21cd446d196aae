/**
 * A pet store behind createFetchHandler as a Cloudflare Worker (bundled with esbuild by
 * test/support/worker.ts, run by workerd through Miniflare). Memory storage. The conformance
 * suite controls it from the test process through scheduled events, which only Miniflare (or the
 * Workers platform's cron) can send, never over HTTP: cron "reset" gives a fresh empty store,
 * cron "seed <NewPet JSON>" creates that pet.
 */
import { createFetchHandler } from "../../adapters/fetch.ts";
import type { PetStore } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";
import { CORS_ORIGIN } from "./conformance-origin.ts";

const KEY = "conformance-key";
/** The keys: KEY with every scope, the conformance suite's read-only key with pets:read. */
const AUTH = { keys: [KEY, { name: "reader", key: "conformance-read-key", scopes: ["pets:read"] }] };
let store: PetStore = createPetStore({ auth: AUTH, cors: { origins: [CORS_ORIGIN] } });
let handler = createFetchHandler(store);

export default {
  fetch: (request: Request) => handler(request),
  async scheduled(event: { cron: string }) {
    if (event.cron === "reset") {
      const old = store;
      store = createPetStore({ auth: AUTH, cors: { origins: [CORS_ORIGIN] } });
      handler = createFetchHandler(store);
      await old.close();
    } else if (event.cron.startsWith("seed ")) await store.createPet(JSON.parse(event.cron.slice(5)));
    else throw new Error(`unknown command ${event.cron}`);
  },
};
