/**
 * Embedding the pet store in an existing Fastify application.
 *
 * The application keeps its own routes (one parses a JSON body with Fastify's own parser), its
 * own hook (an `X-Shop` header on every answer) and its own 404 handler. The pet store plugin adds
 * the API under /v1: real Fastify routes, where Fastify's body parsing is off (the store reads the
 * body itself, after checking the key). `petStoreFrameworkErrors` lets the store answer the few
 * URLs Fastify's router cannot decode (`/v1/pets/%zz`) as the API's contract says.
 *
 *   npx tsx examples/fastify-embed/server.ts          serves on PORT (default 3000) until Ctrl-C
 *   npx tsx examples/fastify-embed/server.ts --once   runs the demo requests below, then stops
 *
 * In your project, import from "petstore-lib" and "petstore-lib/fastify" instead of the paths below.
 */
import Fastify from "fastify";
import { petStoreFrameworkErrors, petStorePlugin } from "../../adapters/fastify.ts";
import { createPetStore } from "../../lib/index.ts";

const PORT = Number(process.env.PORT ?? 3000);
const API_KEY = process.env.PETSTORE_API_KEY ?? "pets-api-key";

const store = createPetStore({ auth: [API_KEY] }); // memory storage, base path /v1
const app = Fastify({ frameworkErrors: petStoreFrameworkErrors(store) });

// The application's own routes, hook and 404 handler, as they were before the pet store arrived.
app.addHook("onSend", async (_request, reply) => {
  reply.header("x-shop", "Happy Paws");
});
app.get("/", async () => ({ shop: "Happy Paws", api: "/v1/pets" }));
app.post("/newsletter", async (request) => ({ subscribed: (request.body as { email?: string }).email }));
app.get("/stats", async () => ({ petsOnFirstPage: (await store.listPets({ limit: 100 })).pets.length }));
app.setNotFoundHandler((_request, reply) => {
  reply.code(404).send({ error: "nothing here (the application's own 404)" });
});

// The pet store.
await app.register(petStorePlugin, { store });
app.addHook("onClose", () => store.close());

const url = await app.listen({ port: PORT, host: "127.0.0.1" });
console.log(`fastify app listening on ${url} (pet store at ${url}/v1)`);

/** Sends one request and prints one line: what was asked, the status, chosen headers, the body. */
async function show(label: string, path: string, init: RequestInit = {}, headers: string[] = []) {
  const res = await fetch(url + path, init);
  const shown = headers.map((h) => ` [${h}: ${res.headers.get(h)}]`).join("");
  console.log(`${label.padEnd(40)} -> ${res.status}${shown} ${await res.text()}`);
}

const bearer = { authorization: `Bearer ${API_KEY}` };
const json = { "content-type": "application/json" };
await show("GET / (application route)", "/", {}, ["x-shop"]);
await show("POST /newsletter (application, JSON)", "/newsletter", {
  method: "POST",
  headers: json,
  body: JSON.stringify({ email: "ann@example.com" }),
});
await show("GET /nope (application 404)", "/nope");
await show("GET /v1/pets (no API key)", "/v1/pets");
await show(
  "POST /v1/pets (API key)",
  "/v1/pets",
  { method: "POST", headers: { ...bearer, ...json }, body: JSON.stringify({ name: "Rex", categoryId: 1 }) },
  ["location", "x-shop"],
);
await show("POST /v1/pets (malformed JSON)", "/v1/pets", {
  method: "POST",
  headers: { ...bearer, ...json },
  body: "{",
});
await show("GET /v1/pets (API key)", "/v1/pets", { headers: bearer });
await show("GET /v1/pets/%zz (API key)", "/v1/pets/%zz", { headers: bearer });
await show("DELETE /v1/pets (API key)", "/v1/pets", { method: "DELETE", headers: bearer }, ["allow"]);
await show("GET /stats (application, in-process)", "/stats");

async function stop() {
  await app.close(); // in-flight requests finish, then onClose closes the store
  console.log("stopped");
}

if (process.argv.includes("--once")) {
  await stop();
} else {
  console.log("Serving until Ctrl-C.");
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
