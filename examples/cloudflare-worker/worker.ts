/**
 * The pet store as a Cloudflare Worker: the fetch handler is the Worker's `fetch`. The API key is
 * a secret (`npx wrangler secret put PETSTORE_API_KEY`), which Workers put in `process.env` with
 * the `nodejs_compat` flag and a compatibility date from 2025-04-01 on (wrangler.toml beside this
 * file; Keyv also needs the flag for buffer).
 *
 *   npx wrangler dev       serves it locally (workerd), npx wrangler deploy   deploys it
 *
 * Memory storage lives in one Worker isolate: each isolate has its own pets, lost when it is
 * evicted. Good for a demo or a preview; the SQLite, Redis and Postgres storages do not load in a
 * Worker (see the README's storage table).
 *
 * In your project: import from "petstore-lib" and "petstore-lib/fetch" instead of the paths below.
 */
import { createFetchHandler } from "../../adapters/fetch.ts";
import { createPetStore } from "../../lib/index.ts";

const petStore = createFetchHandler(createPetStore({ auth: [process.env.PETSTORE_API_KEY as string] }));

export default { fetch: petStore };
