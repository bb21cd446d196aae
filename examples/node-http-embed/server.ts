/**
 * Embedding the pet store in an existing plain Node `http` server.
 *
 * The server already serves its own paths (a home page, a health check, a 404 page). The pet
 * store's listener takes everything under its base path (/v1) and hands every other request to
 * `fallback`, which is the server's original request handler, unchanged.
 *
 *   npx tsx examples/node-http-embed/server.ts          serves on PORT (default 3000) until Ctrl-C
 *   npx tsx examples/node-http-embed/server.ts --once   runs the demo requests below, then stops
 *
 * In your project, import from "petstore-lib" and "petstore-lib/node-http" instead of the paths below.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createNodeHandler } from "../../adapters/node-http.ts";
import { createPetStore } from "../../lib/index.ts";

const PORT = Number(process.env.PORT ?? 3000);
const API_KEY = process.env.PETSTORE_API_KEY ?? "pets-api-key";

/** The application's own routes, as they were before the pet store arrived. */
function appRoutes(req: IncomingMessage, res: ServerResponse) {
  if (req.method === "GET" && req.url === "/") {
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
    res.end("Welcome to Happy Paws. The pet API lives under /v1.");
  } else if (req.method === "GET" && req.url === "/health") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
  } else {
    res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
    res.end("Nothing here (the application's own 404 page).");
  }
}

const store = createPetStore({ auth: [API_KEY] }); // memory storage, base path /v1
const server = createServer(createNodeHandler(store, { fallback: appRoutes }));

await new Promise<void>((resolve) => server.listen(PORT, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
console.log(`node http server listening on ${url} (pet store at ${url}/v1)`);

/** Stops accepting, closes idle keep-alive connections, then closes the storage. */
async function stop() {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  await store.close();
  console.log("stopped");
}

/** Sends one request and prints one line: what was asked, the status, chosen headers, the body. */
async function show(label: string, path: string, init: RequestInit = {}, headers: string[] = []) {
  const res = await fetch(url + path, init);
  const shown = headers.map((h) => ` [${h}: ${res.headers.get(h)}]`).join("");
  console.log(`${label.padEnd(38)} -> ${res.status}${shown} ${await res.text()}`);
}

const bearer = { authorization: `Bearer ${API_KEY}` };
await show("GET / (application route)", "/");
await show("GET /health (application route)", "/health");
await show("GET /nope (application 404)", "/nope");
await show("GET /v1/pets (no API key)", "/v1/pets");
await show(
  "POST /v1/pets (API key)",
  "/v1/pets",
  {
    method: "POST",
    headers: { ...bearer, "content-type": "application/json" },
    body: JSON.stringify({ name: "Tom", categoryId: 2, status: "pending" }),
  },
  ["location"],
);
await show("GET /v1/pets?status=pending (API key)", "/v1/pets?status=pending", { headers: bearer });
await show("GET /v1/pets/1 (API key, deprecated)", "/v1/pets/1", { headers: bearer }, ["deprecation", "sunset"]);
await show("GET /v1/nope (pet store 404)", "/v1/nope", { headers: bearer });

if (process.argv.includes("--once")) {
  await stop();
} else {
  console.log("Serving until Ctrl-C.");
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
