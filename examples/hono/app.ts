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

const store = createPetStore({ auth: [process.env.PETSTORE_API_KEY ?? "pets-api-key"] });
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
