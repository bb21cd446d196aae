/**
 * The document as code generators read it (orval, @hey-api/openapi-ts; test/package/generated-clients
 * runs them): a `type` beside every `const` and `enum`, each error variant complete on its own, and
 * servers that the OpenAPI 3.1 schema bundled by swagger-parser (orval 7) accepts.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildOpenApi } from "../../lib/entries/openapi.ts";

// biome-ignore lint/suspicious/noExplicitAny: the document is free-form JSON
type Json = any;

const committed: Json = buildOpenApi();
const withRules: Json = buildOpenApi({
  ruleCodes: [{ code: "name_taken", status: 409, description: "Another pet has this name." }],
});

/** Every object of the document, with its JSON pointer. */
function objectsOf(node: Json, pointer = "#"): { pointer: string; value: Json }[] {
  if (node === null || typeof node !== "object") return [];
  const found = Array.isArray(node) ? [] : [{ pointer, value: node }];
  for (const [key, child] of Object.entries(node)) found.push(...objectsOf(child, `${pointer}/${key}`));
  return found;
}

/** The JSON Schema type of a value, as a `type` keyword names it. */
const typeOf = (value: unknown): string =>
  Number.isInteger(value) ? "integer" : value === null ? "null" : Array.isArray(value) ? "array" : typeof value;

test("openapi for generators: every const and enum has a type beside it that its values match (orval typed `const: 404` as the string '404')", () => {
  for (const [name, doc] of [
    ["committed", committed],
    ["with rule codes", withRules],
  ]) {
    let checked = 0;
    for (const { pointer, value } of objectsOf(doc)) {
      if (!("const" in value) && !("enum" in value)) continue;
      checked++;
      const values = "const" in value ? [value.const] : value.enum;
      assert.type(value.type, "string", `${name}: ${pointer} has no type`);
      for (const v of values) {
        const ok = value.type === typeOf(v) || (value.type === "number" && typeof v === "number");
        assert.ok(ok, `${name}: ${pointer}: ${JSON.stringify(v)} is not of type ${value.type}`);
      }
    }
    assert.ok(checked > 40, `${name}: ${checked} schemas with const or enum`);
  }
});

test("openapi for generators: every error variant requires code, message and status, and narrows code (a string enum) and status (an integer const)", () => {
  let variants = 0;
  for (const { pointer, value } of objectsOf(withRules)) {
    if (value.allOf?.[0]?.$ref !== "#/components/schemas/Error") continue;
    variants++;
    const narrowed = value.allOf[1];
    assert.equal(narrowed.required, ["code", "message", "status"], pointer);
    assert.is(narrowed.properties.code.type, "string", pointer);
    assert.ok(narrowed.properties.code.enum.length > 0, pointer);
    assert.is(narrowed.properties.status.type, "integer", pointer);
    assert.type(narrowed.properties.status.const, "number", pointer);
  }
  assert.ok(variants >= 19, `${variants} error variants`);
  assert.equal(withRules.components.schemas.Error.required, ["code", "message", "status"]);
  assert.ok(withRules.components.schemas.Error.properties.code.enum.includes("name_taken"));
});

test("openapi for generators: a server variable holds only its default (swagger-parser's OAS 3.1 schema refuses `description`); the server's description says what it is", () => {
  for (const doc of [committed, buildOpenApi({ basePath: "/api", productionUrl: "https://pets.test/api" })]) {
    for (const server of doc.servers) {
      for (const variable of Object.values<Json>(server.variables)) assert.equal(Object.keys(variable), ["default"]);
      assert.match(
        server.description,
        /`baseUrl` is the \w+ base URL, including the base path \(e\.g\. `https:\/\/petstore\.example\.com\/(v1|api)`\)/,
      );
    }
  }
});

test.run();
