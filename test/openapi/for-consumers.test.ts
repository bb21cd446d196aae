/**
 * The document a store serves at {base}/openapi.json, which the /docs page shows, describes what is
 * served: the CORS preflights only when CORS is on. Its descriptions speak to those who call the
 * API (what it does, authentication, pagination), never of how a server is set up.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildOpenApi } from "../../lib/entries/openapi.ts";
import { call, json, makeStore } from "../support/helpers.ts";

// biome-ignore lint/suspicious/noExplicitAny: the document is free-form JSON
type Json = any;

/** The document a store serves, as the docs page fetches it (no key). */
async function served(options: Parameters<typeof makeStore>[0] = {}): Promise<Json> {
  const res = await call(makeStore(options), "GET", "/v1/openapi.json", { auth: false });
  assert.is(res.status, 200);
  return json(res);
}

/** "operationId METHOD path" of every operation. */
const operations = (doc: Json): string[] =>
  Object.entries<Json>(doc.paths)
    .flatMap(([path, item]) =>
      Object.entries<Json>(item).map(([method, op]) => `${op.operationId} ${method.toUpperCase()} ${path}`),
    )
    .sort();

/** Every string of the document, with where it is. */
function strings(node: Json, at = "#"): [string, string][] {
  if (typeof node === "string") return [[at, node]];
  if (node === null || typeof node !== "object") return [];
  return Object.entries<Json>(node).flatMap(([key, value]) => strings(value, `${at}/${key}`));
}

test("served openapi.json without CORS: no OPTIONS operations, no cors tag, no CORS paragraph", async () => {
  const doc = await served();
  assert.equal(operations(doc), ["createPet POST /pets", "getPet GET /pets/{petId}", "listPets GET /pets"]);
  assert.equal(
    doc.tags.map((t: Json) => t.name),
    ["pets"],
  );
  assert.not.match(doc.info.description, /CORS/);
});

test("served openapi.json with CORS on: each path's preflight is there", async () => {
  const doc = await served({ cors: { origins: ["https://app.example"] } });
  assert.equal(operations(doc), [
    "createPet POST /pets",
    "getPet GET /pets/{petId}",
    "listPets GET /pets",
    "preflightPet OPTIONS /pets/{petId}",
    "preflightPets OPTIONS /pets",
  ]);
  assert.match(doc.info.description, /CORS/);
});

test("openapi: the descriptions speak to API consumers, never of server settings (no env variable, no createPetStore)", async () => {
  for (const doc of [buildOpenApi(), await served(), await served({ cors: { origins: ["https://app.example"] } })]) {
    for (const [at, text] of strings(doc)) {
      assert.not.match(text, /PETSTORE_|createPetStore|standalone server|Node adapter/, at);
    }
  }
  const about = buildOpenApi().info.description;
  assert.match(about, /`Authorization: Bearer <key>`/);
  assert.match(about, /\*\*Pagination\.\*\*.*`Link`.*rel="next"/);
  assert.match(about, /`pets:read`.*`pets:write`/);
});

test.run();
