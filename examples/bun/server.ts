/**
 * The pet store on Bun: `Bun.serve` with the fetch handler; the application's own routes go to
 * `fallback`. Memory storage (any other works too: see the README's storage × runtime table).
 *
 *   bun examples/bun/server.ts            serves on PORT (default 3000) until Ctrl-C or SIGTERM
 *
 * In your project: import from "petstore-lib" and "petstore-lib/fetch" instead of the paths below.
 */
import { createFetchHandler } from "../../adapters/fetch.ts";
import { createPetStore } from "../../lib/index.ts";

const KEY = process.env.PETSTORE_API_KEY ?? "pets-api-key";
const store = createPetStore({ auth: [KEY] });
const fetch = createFetchHandler(store, {
  fallback: () => new Response("Welcome to Happy Paws. The pet API lives under /v1."),
});
const server = Bun.serve({ port: Number(process.env.PORT ?? 3000), hostname: "127.0.0.1", fetch });
console.log(`Bun.serve listening on ${server.url} (pet store at ${server.url}v1)`);
// The example's own key is printed; one from the environment is not (as the standalone server does).
const shown = process.env.PETSTORE_API_KEY === undefined ? KEY : "$PETSTORE_API_KEY";
console.log(`try: curl -H "Authorization: Bearer ${shown}" ${server.url}v1/pets`);

process.on("SIGTERM", async () => {
  await server.stop(); // finishes the requests in flight
  await store.close();
  console.log("stopped");
  process.exit(0);
});
