/**
 * The pet store on Deno: `Deno.serve` with the fetch handler; the application's own routes go to
 * `fallback`. Memory storage (any other works too: see the README's storage × runtime table).
 *
 *   deno run --allow-net --allow-env --allow-read examples/deno/server.ts
 *       serves on PORT (default 3000) until Ctrl-C or SIGTERM
 *
 * In your project: import from "npm:petstore-lib" and "npm:petstore-lib/fetch" (or the bare names
 * with a package.json) instead of the paths below.
 */
import { createFetchHandler } from "../../adapters/fetch.ts";
import { createPetStore } from "../../lib/index.ts";

const KEY = Deno.env.get("PETSTORE_API_KEY") ?? "pets-api-key";
// The example's own key is printed; one from the environment is not (as the standalone server does).
const shown = Deno.env.get("PETSTORE_API_KEY") === undefined ? KEY : "$PETSTORE_API_KEY";
const store = createPetStore({ auth: [KEY] });
const handler = createFetchHandler(store, {
  fallback: () => new Response("Welcome to Happy Paws. The pet API lives under /v1."),
});
const server = Deno.serve(
  {
    port: Number(Deno.env.get("PORT") ?? 3000),
    hostname: "127.0.0.1",
    onListen: ({ port }) => {
      console.log(`Deno.serve listening on http://127.0.0.1:${port}/ (pet store at /v1)`);
      console.log(`try: curl -H "Authorization: Bearer ${shown}" http://127.0.0.1:${port}/v1/pets`);
    },
  },
  handler,
);

Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown(); // finishes the requests in flight
  await store.close();
  console.log("stopped");
  Deno.exit(0);
});
