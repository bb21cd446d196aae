/**
 * Embedding the pet store in an existing hapi application.
 *
 * The application keeps its own routes and its own authentication (a "staff" strategy built on a
 * small header scheme written inline, set as the default for every route). The pet store plugin
 * adds the API under /v1, where the API's own bearer keys apply: the plugin's routes opt out of
 * the host's default strategy, and the store checks `Authorization: Bearer <key>` itself.
 *
 *   npx tsx examples/hapi-embed/server.ts          serves on PORT (default 3000) until Ctrl-C
 *   npx tsx examples/hapi-embed/server.ts --once   runs the demo requests below, then stops
 *
 * In your project, import from "petstore-lib" and "petstore-lib/hapi" instead of the paths below.
 */
import Hapi from "@hapi/hapi";
import { petStorePlugin } from "../../adapters/hapi.ts";
import { createPetStore } from "../../lib/index.ts";

const PORT = Number(process.env.PORT ?? 3000);
const STAFF_TOKEN = process.env.STAFF_TOKEN ?? "staff-only-token"; // the host application's own secret
const API_KEY = process.env.PETSTORE_API_KEY ?? "pets-api-key"; // a key of the pet store API

/** The host's own scheme: `X-Staff-Token: <token>`. Anything else is answered 401 by hapi. */
function staffTokenScheme(): Hapi.ServerAuthSchemeObject {
  return {
    authenticate(request, h) {
      const token = request.headers["x-staff-token"];
      if (token !== STAFF_TOKEN) {
        return h.response({ error: "staff token required" }).code(401).takeover();
      }
      return h.authenticated({ credentials: { user: "staff" } });
    },
  };
}

/** Builds the host application: its routes and auth first, then the pet store beside them. */
export async function createApp(port: number) {
  const server = Hapi.server({ port, host: "127.0.0.1" });

  server.auth.scheme("staff-token", staffTokenScheme);
  server.auth.strategy("staff", "staff-token");
  server.auth.default("staff"); // every host route needs the staff token unless it says otherwise

  // The pet store: memory storage, one API key, routes under its basePath (/v1 by default).
  const store = createPetStore({ auth: [API_KEY] });
  await server.register({ plugin: petStorePlugin, options: { store } });

  server.route([
    { method: "GET", path: "/", options: { auth: false }, handler: () => ({ shop: "Happy Paws", api: "/v1/pets" }) },
    {
      // A host route that uses the store in-process, without HTTP.
      method: "GET",
      path: "/admin/stats",
      handler: async (request) => {
        const { pets } = await store.listPets({ limit: 100 });
        return { user: request.auth.credentials.user, petsOnFirstPage: pets.length };
      },
    },
  ]);

  await server.start();
  return {
    url: server.info.uri,
    /** Stops hapi (in-flight requests finish), then closes the storage. */
    async stop() {
      await server.stop({ timeout: 5000 });
      await store.close();
    },
  };
}

/** Sends one request and prints one line: what was asked, the status, the body. */
async function show(label: string, url: string, init: RequestInit = {}) {
  const res = await fetch(url, init);
  console.log(`${label.padEnd(38)} -> ${res.status} ${await res.text()}`);
}

async function demo(url: string) {
  const bearer = { authorization: `Bearer ${API_KEY}` };
  await show("GET / (host route, public)", `${url}/`);
  await show("GET /admin/stats (no staff token)", `${url}/admin/stats`);
  await show("GET /v1/pets (no API key)", `${url}/v1/pets`);
  await show("POST /v1/pets (API key)", `${url}/v1/pets`, {
    method: "POST",
    headers: { ...bearer, "content-type": "application/json" },
    body: JSON.stringify({ name: "Rex", categoryId: 1 }),
  });
  await show("GET /v1/pets (API key)", `${url}/v1/pets`, { headers: bearer });
  await show("GET /v1/pets (staff token, no API key)", `${url}/v1/pets`, { headers: { "x-staff-token": STAFF_TOKEN } });
  await show("GET /admin/stats (staff token)", `${url}/admin/stats`, { headers: { "x-staff-token": STAFF_TOKEN } });
}

const app = await createApp(PORT);
console.log(`hapi app listening on ${app.url} (pet store at ${app.url}/v1)`);
await demo(app.url);

if (process.argv.includes("--once")) {
  await app.stop();
  console.log("stopped");
} else {
  console.log("Serving until Ctrl-C.");
  const stop = async () => {
    await app.stop();
    console.log("stopped");
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
