/**
 * The pet store inside a Hono application: Hono keeps its own routes and middleware; every
 * request under /v1 goes to the fetch handler as the Web standard Request Hono holds (c.req.raw).
 * Mount it before anything that reads the body (c.req.json(), validators) on those paths.
 *
 *   bun examples/hono/app.ts      or   deno serve --allow-env examples/hono/app.ts
 *   (both serve the default export, { fetch }; on Node, @hono/node-server's serve(app))
 *
 * In your project: import from "petstore-lib" and "petstore-lib/fetch" instead of the paths below.
 */
import { Hono } from "hono";
import { createFetchHandler } from "../../adapters/fetch.ts";
import { createPetStore } from "../../lib/index.ts";

const KEY = process.env.PETSTORE_API_KEY ?? "pets-api-key";
const store = createPetStore({ auth: [KEY] });
const petStore = createFetchHandler(store);

export const app = new Hono();
app.use(async (c, next) => {
  await next();
  c.header("x-served-by", "hono"); // the application's own middleware still runs around the store
});
app.get("/", (c) => c.text("Welcome to Happy Paws. The pet API lives under /v1."));
app.all("/v1", (c) => petStore(c.req.raw));
app.all("/v1/*", (c) => petStore(c.req.raw));

export default app;

// Run as a program (bun, deno serve): the runtime serves the default export; say how to call it.
// The example's own key is printed; one from the environment is not (as the standalone server does).
if (import.meta.main) {
  const shown = process.env.PETSTORE_API_KEY === undefined ? KEY : "$PETSTORE_API_KEY";
  console.log(`Hono app: the pet store is under /v1; send "Authorization: Bearer ${shown}"`);
}
