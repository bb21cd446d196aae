/**
 * The pet store as a Cloudflare Worker: the fetch handler is the Worker's `fetch`. The API key is
 * a secret (`npx wrangler secret put PETSTORE_API_KEY`); wrangler.toml beside this file turns on
 * `nodejs_compat` (the core uses node:crypto, Keyv imports buffer).
 *
 *   npx wrangler dev       serves it locally (workerd), npx wrangler deploy   deploys it
 *
 * Memory storage lives in one Worker isolate: each isolate has its own pets, lost when it is
 * evicted. Good for a demo or a preview; a store that lasts needs storage the Worker can reach.
 *
 * In your project: import from "petstore-lib" and "petstore-lib/fetch" instead of the paths below.
 */
import type { FetchHandler } from "../../adapters/fetch.ts";
import { createFetchHandler } from "../../adapters/fetch.ts";
import { createPetStore } from "../../lib/index.ts";

interface Env {
  PETSTORE_API_KEY: string;
}

let handler: FetchHandler | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    handler ??= createFetchHandler(createPetStore({ auth: [env.PETSTORE_API_KEY] }));
    return handler(request);
  },
};
