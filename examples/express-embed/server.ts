/**
 * Embedding the pet store in an existing Express application (Express 5 here; Express 4 works the
 * same way), under a mount path: the API lives at /shop/v1.
 *
 * `app.use("/shop", createNodeHandler(store))` with the store's base path given in full
 * (`basePath: "/shop/v1"`, mount included), so that Location and Link headers point at the right
 * place. The store is mounted BEFORE `express.json()`: the store reads the request body itself,
 * after checking the key, and a body another middleware has already read cannot be read again
 * (the store would answer 500 and tell `onError` to mount it before body parsers).
 *
 *   npx tsx examples/express-embed/server.ts          serves on PORT (default 3000) until Ctrl-C
 *   npx tsx examples/express-embed/server.ts --once   runs the demo requests below, then stops
 *
 * In your project, import from "petstore-lib" and "petstore-lib/node-http" instead of the paths below.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { createNodeHandler } from "../../adapters/node-http.ts";
import { createPetStore } from "../../lib/index.ts";

const PORT = Number(process.env.PORT ?? 3000);
const API_KEY = process.env.PETSTORE_API_KEY ?? "pets-api-key";

const store = createPetStore({
  auth: [API_KEY],
  basePath: "/shop/v1", // the mount path (/shop) and the API's own base (/v1)
  onError: (error) => console.error("pet store error:", error),
});

const app = express();
app.use("/shop", createNodeHandler(store)); // first: before any body parser
app.use(express.json()); // the application's parser, for its own routes
app.get("/", (_req, res) => {
  res.json({ shop: "Happy Paws", api: "/shop/v1/pets" });
});
app.post("/shop/newsletter", (req, res) => {
  res.json({ subscribed: req.body.email });
});
app.get("/shop/stats", async (_req, res) => {
  res.json({ petsOnFirstPage: (await store.listPets({ limit: 100 })).pets.length });
});

const server: Server = await new Promise((resolve) => {
  const s = app.listen(PORT, "127.0.0.1", () => resolve(s));
});
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
console.log(`express app listening on ${url} (pet store at ${url}/shop/v1)`);

/** Sends one request and prints one line: what was asked, the status, chosen headers, the body. */
async function show(label: string, path: string, init: RequestInit = {}, headers: string[] = []) {
  const res = await fetch(url + path, init);
  const shown = headers.map((h) => ` [${h}: ${res.headers.get(h)}]`).join("");
  console.log(`${label.padEnd(44)} -> ${res.status}${shown} ${await res.text()}`);
}

const bearer = { authorization: `Bearer ${API_KEY}` };
const json = { "content-type": "application/json" };
await show("GET / (application route)", "/", {}, ["x-powered-by"]);
await show("POST /shop/newsletter (application, JSON)", "/shop/newsletter", {
  method: "POST",
  headers: json,
  body: JSON.stringify({ email: "ann@example.com" }),
});
await show("GET /shop/v1/pets (no API key)", "/shop/v1/pets", {}, ["x-powered-by"]);
await show(
  "POST /shop/v1/pets (API key)",
  "/shop/v1/pets",
  { method: "POST", headers: { ...bearer, ...json }, body: JSON.stringify({ name: "Rex", categoryId: 1 }) },
  ["location"],
);
await show("POST /shop/v1/pets (malformed JSON)", "/shop/v1/pets", {
  method: "POST",
  headers: { ...bearer, ...json },
  body: "{",
});
await show("GET /shop/v1/pets (API key)", "/shop/v1/pets", { headers: bearer });
await show("GET /shop/stats (application, in-process)", "/shop/stats");

async function stop() {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  await store.close();
  console.log("stopped");
}

if (process.argv.includes("--once")) {
  await stop();
} else {
  console.log("Serving until Ctrl-C.");
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
