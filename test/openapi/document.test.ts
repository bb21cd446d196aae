/** The OpenAPI document: in sync with the schemas, shaped as the contract says, served without a key. */
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildOpenApi } from "../../lib/entries/openapi.ts";
import type { ErrorCode } from "../../lib/errors.ts";
import { ERRORS } from "../../lib/errors.ts";
import { SCHEMA_COMPONENTS } from "../../lib/schema-components.ts";
import { convertSchemas } from "../../scripts/json-schemas.ts";
import { call, makeStore } from "../support/helpers.ts";

// biome-ignore lint/suspicious/noExplicitAny: the document is free-form JSON
type Json = any;

const doc: Json = buildOpenApi();
const ops: Record<string, Json> = {
  listPets: doc.paths["/pets"].get,
  createPet: doc.paths["/pets"].post,
  getPet: doc.paths["/pets/{petId}"].get,
};
const resolve = (node: Json): Json =>
  node?.$ref
    ? node.$ref
        .slice(2)
        .split("/")
        .reduce((n: Json, k: string) => n[k], doc)
    : node;
const codesOf = (response: Json): string[] =>
  resolve(response).content["application/json"].schema.allOf[1].properties.code.enum;

test("openapi.json: the committed file equals the document generated from the schemas (else run `npm run openapi`)", () => {
  const committed = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8"));
  assert.equal(committed, doc);
});

test("openapi: lib/schema-components.ts holds what @valibot/to-json-schema makes of the schemas (else run `npm run openapi`)", () => {
  assert.equal(SCHEMA_COMPONENTS, convertSchemas());
});

test("openapi: the document is OpenAPI 3.1 of interface version 1.0.0", () => {
  assert.is(doc.openapi, "3.1.0");
  assert.is(doc.info.version, "1.0.0");
});

test("openapi: the operations are listPets (GET /pets), createPet (POST /pets) and getPet (GET /pets/{petId}), and each path's CORS preflight (OPTIONS), nothing else", () => {
  const found = Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item).map(([method, op]) => `${op.operationId} ${method.toUpperCase()} ${path}`),
  );
  assert.equal(found.sort(), [
    "createPet POST /pets",
    "getPet GET /pets/{petId}",
    "listPets GET /pets",
    "preflightPet OPTIONS /pets/{petId}",
    "preflightPets OPTIONS /pets",
  ]);
});

test("openapi: a CORS preflight needs no key and answers 204 (the origin allowed) or 405, with the Access-Control headers", () => {
  for (const [path, methods] of [
    ["/pets", "GET, HEAD, POST"],
    ["/pets/{petId}", "GET, HEAD"],
  ] as const) {
    const op = doc.paths[path].options;
    assert.equal(op.security, [], "answered before the key");
    assert.equal(Object.keys(op.responses).sort(), ["204", "405"]);
    assert.ok(op.description.includes(methods), op.description);
    assert.ok("Access-Control-Allow-Origin" in op.responses["204"].headers);
  }
});

const SCOPE: Record<string, string> = { listPets: "pets:read", getPet: "pets:read", createPet: "pets:write" };

test("openapi: every operation requires the bearer security scheme with its scope (pets:read, pets:write)", () => {
  assert.equal(doc.components.securitySchemes.bearerAuth, {
    type: "http",
    scheme: "bearer",
    description: doc.components.securitySchemes.bearerAuth.description,
  });
  for (const [name, op] of Object.entries(ops)) assert.equal(op.security, [{ bearerAuth: [SCOPE[name]] }], name);
  assert.equal(doc.security, [{ bearerAuth: [] }]);
  assert.equal(Object.keys(doc.components.securitySchemes), ["bearerAuth"], "no token scheme without jwt()");
});

test("openapi: with jwt() the served document adds an openIdConnect scheme (the issuer's discovery) to each operation's requirement", async () => {
  const { createPetStore } = await import("../../lib/index.ts");
  const { jwt } = await import("../../lib/entries/auth.ts");
  const store = createPetStore({
    auth: { keys: ["k"], verify: jwt({ issuer: "https://id.example/", audience: "api" }) },
  });
  const res = await store.handle({ method: "GET", path: "/v1/openapi.json", headers: {} });
  const served = JSON.parse(res.body);
  assert.equal(served.components.securitySchemes.openId.type, "openIdConnect");
  assert.is(
    served.components.securitySchemes.openId.openIdConnectUrl,
    "https://id.example/.well-known/openid-configuration",
  );
  assert.equal(served.paths["/pets"].post.security, [{ bearerAuth: ["pets:write"] }, { openId: ["pets:write"] }]);
  assert.equal(served.paths["/pets"].get.security, [{ bearerAuth: ["pets:read"] }, { openId: ["pets:read"] }]);
});

test("openapi: servers are production and staging, with the base URL (base path included) as a server variable", () => {
  assert.equal(
    doc.servers.map((s: Json) => s.description.split(":")[0]),
    ["Production", "Staging"],
  );
  for (const server of doc.servers) {
    assert.is(server.url, "{baseUrl}");
    assert.is(server.variables.baseUrl.default, "/v1");
    assert.match(server.description, /`baseUrl` is the (production|staging) base URL, including the base path/);
  }
  const custom = buildOpenApi({ basePath: "/api", productionUrl: "https://pets.test/api" });
  assert.is(custom.servers[0].variables.baseUrl.default, "https://pets.test/api");
  assert.is(custom.servers[1].variables.baseUrl.default, "/api");
});

const expectedStatuses: Record<string, string[]> = {
  listPets: ["200", "304", "400", "401", "403", "429", "500", "503"],
  createPet: ["201", "400", "401", "403", "409", "413", "415", "422", "429", "500", "503"],
  getPet: ["200", "304", "400", "401", "403", "404", "429", "500", "503"],
};
const expectedCodes: Record<string, Record<string, ErrorCode[]>> = {
  listPets: {
    "400": ["invalid_request", "invalid_query"],
    "401": ["unauthorized"],
    "403": ["insufficient_scope"],
    "429": ["rate_limited"],
    "500": ["internal_error"],
    "503": ["storage_unavailable"],
  },
  createPet: {
    "400": ["invalid_request", "invalid_body", "malformed_json", "invalid_idempotency_key"],
    "401": ["unauthorized"],
    "403": ["insufficient_scope"],
    "409": ["idempotency_key_in_use"],
    "413": ["payload_too_large"],
    "415": ["unsupported_media_type"],
    "422": ["idempotency_key_reused"],
    "429": ["rate_limited"],
    "500": ["internal_error"],
    "503": ["storage_unavailable"],
  },
  getPet: {
    "400": ["invalid_request", "invalid_pet_id"],
    "401": ["unauthorized"],
    "403": ["insufficient_scope"],
    "404": ["pet_not_found"],
    "429": ["rate_limited"],
    "500": ["internal_error"],
    "503": ["storage_unavailable"],
  },
};

for (const name of Object.keys(expectedStatuses)) {
  test(`openapi ${name}: documents exactly the statuses and error codes the contract lets it produce`, () => {
    const op = ops[name];
    assert.equal(Object.keys(op.responses).sort(), expectedStatuses[name]);
    for (const [status, codes] of Object.entries(expectedCodes[name] as Record<string, ErrorCode[]>)) {
      assert.equal(codesOf(op.responses[status]), codes, `${name} ${status}`);
      for (const code of codes) assert.is(ERRORS[code].status, Number(status), code);
      const schema = op.responses[status].content["application/json"].schema;
      assert.equal(schema.allOf[0], { $ref: "#/components/schemas/Error" });
      assert.equal(schema.allOf[1].properties.status, { type: "integer", const: Number(status) });
    }
  });
}

test("openapi: every code of the error table is documented (404 not_found and 405 as components with Allow)", () => {
  const documented = new Set<string>();
  for (const op of Object.values(ops)) {
    for (const [status, response] of Object.entries<Json>(op.responses))
      if (Number(status) >= 400) for (const c of codesOf(response)) documented.add(c);
  }
  for (const response of Object.values<Json>(doc.components.responses))
    for (const c of codesOf(response)) documented.add(c);
  assert.equal([...documented].sort(), Object.keys(ERRORS).sort());
  assert.ok(doc.components.responses.MethodNotAllowed.headers.Allow);
  assert.equal(codesOf(doc.components.responses.NotFound), ["not_found"]);
});

test("openapi createPet: declares the Idempotency-Key header (format and the retention in words), Idempotent-Replayed on 201, Retry-After on 409", () => {
  const param = doc.components.parameters["Idempotency-Key"];
  assert.equal(ops.createPet.parameters[0], { $ref: "#/components/parameters/Idempotency-Key" });
  assert.is(param.in, "header");
  assert.is(param.required, false);
  assert.match(param.description, /kept for 24 hours after its first use/);
  assert.is(param["x-idempotency-retention-seconds"], 86_400);
  const pattern = new RegExp(param.schema.pattern);
  for (const ok of ["abc", '"abc"', "!", "~".repeat(255)]) assert.ok(pattern.test(ok), ok);
  for (const bad of ["", '""', "a b", 'a"b', "a\\b", "x".repeat(256)]) assert.not.ok(pattern.test(bad), bad);
  assert.equal(ops.createPet.responses["201"].headers["Idempotent-Replayed"], {
    $ref: "#/components/headers/Idempotent-Replayed",
  });
  assert.is(doc.components.headers["Idempotent-Replayed"].required, false);
  assert.ok(ops.createPet.responses["409"].headers["Retry-After"]);
  const served = buildOpenApi({ idempotencyTtlMs: 90_000 }).components.parameters["Idempotency-Key"];
  assert.match(served.description, /kept for 90 seconds/);
});

test("openapi: every response carries required X-Request-Id and Cache-Control (no-store on errors, private on a caller's pet, page or create)", () => {
  const all = [
    ...Object.values(ops).flatMap((op) => Object.values<Json>(op.responses)),
    ...Object.values<Json>(doc.components.responses),
  ];
  for (const response of all) {
    assert.ok(response.headers["X-Request-Id"], response.description);
    assert.ok(response.headers["Cache-Control"], response.description);
  }
  assert.is(resolve(all[0].headers["X-Request-Id"]).required, true);
  const errors = new RegExp(resolve(doc.components.headers["Cache-Control"]).schema.pattern);
  for (const value of ["no-store", "no-store, no-transform"]) assert.ok(errors.test(value), value);
  assert.not.ok(errors.test("private, no-cache"));
  const kept = new RegExp(resolve(doc.components.headers["Cache-Control-Kept"]).schema.pattern);
  for (const value of ["private, no-cache", "private, max-age=60", "no-store", "private, no-cache, no-transform"]) {
    assert.ok(kept.test(value), value);
  }
  assert.not.ok(kept.test("public, max-age=60"), "never for every cache");
  for (const [op, status] of [
    ["listPets", "200"],
    ["getPet", "200"],
    ["createPet", "201"],
    ["listPets", "304"],
  ] as const) {
    assert.equal(ops[op].responses[status].headers["Cache-Control"], {
      $ref: "#/components/headers/Cache-Control-Kept",
    });
  }
  assert.equal(ops.getPet.responses["404"].headers["Cache-Control"], { $ref: "#/components/headers/Cache-Control" });
});

test("openapi: listPets and getPet take If-None-Match, and declare ETag and Vary on 200 and a 304 without content", () => {
  for (const op of [ops.listPets, ops.getPet]) {
    assert.ok(
      op.parameters.some((p: Json) => p.$ref === "#/components/parameters/If-None-Match"),
      op.operationId,
    );
    for (const status of ["200", "304"]) {
      const { headers } = op.responses[status];
      assert.equal(headers.ETag, { $ref: "#/components/headers/ETag" }, `${op.operationId} ${status}`);
      assert.equal(headers.Vary, { $ref: "#/components/headers/Vary-Encoding" }, `${op.operationId} ${status}`);
    }
    assert.is(op.responses["304"].content, undefined, "a 304 has no body");
    assert.ok(op.responses["200"].headers["Content-Encoding"]);
  }
  assert.ok(ops.getPet.responses["304"].headers.Deprecation, "the deprecation headers stay on a 304");
  const etag = new RegExp(resolve(doc.components.headers.ETag).schema.pattern);
  for (const value of ['"0123456789abcdef"', '"0123456789abcdef-br"', 'W/"0123456789abcdef"']) {
    assert.ok(etag.test(value), value);
  }
  assert.is(resolve(doc.components.headers.ETag).required, true);
});

test("openapi: every response, preflights included, declares X-Content-Type-Options: nosniff", () => {
  const all = [
    ...Object.values<Json>(doc.paths).flatMap((path) =>
      Object.values<Json>(path).flatMap((op) => Object.values<Json>(op.responses)),
    ),
    ...Object.values<Json>(doc.components.responses),
  ];
  for (const response of all.map(resolve)) {
    const header = response.headers?.["X-Content-Type-Options"];
    assert.ok(header, response.description);
    assert.is(resolve(header).schema.const, "nosniff");
    assert.is(resolve(header).required, true);
  }
});

test('openapi: every authenticated operation documents 400 invalid_request with WWW-Authenticate error="invalid_request" (optional: absent with the other 400 codes)', () => {
  for (const [name, op] of Object.entries(ops)) {
    assert.ok(codesOf(op.responses["400"]).includes("invalid_request"), name);
    const challenge = resolve(op.responses["400"].headers["WWW-Authenticate"]);
    assert.is(challenge.schema.const, 'Bearer realm="petstore", error="invalid_request"', name);
    assert.is(challenge.required, false, name);
  }
});

test("openapi: 503 storage_unavailable documents Retry-After and 401 documents WWW-Authenticate, on every operation", () => {
  for (const [name, op] of Object.entries(ops)) {
    assert.ok(op.responses["503"].headers["Retry-After"], name);
    assert.ok(op.responses["401"].headers["WWW-Authenticate"], name);
  }
});

test("openapi NewPet and Pet: come from the valibot schemas, refuse unknown fields, bound ids to 2^53-1 (int64)", () => {
  const { NewPet, Pet, PetStatus } = doc.components.schemas;
  assert.is(NewPet.additionalProperties, false);
  assert.is(Pet.additionalProperties, false);
  assert.equal(NewPet.required, ["name", "categoryId"]);
  assert.equal(Pet.required, ["id", "name", "categoryId", "status"]);
  assert.equal(Object.keys(Pet.properties), ["id", "name", "categoryId", "status"]);
  assert.equal(PetStatus.enum, ["available", "pending", "sold"]);
  assert.equal(NewPet.properties.status, { $ref: "#/components/schemas/PetStatus" });
  for (const field of [NewPet.properties.categoryId, Pet.properties.id, Pet.properties.categoryId]) {
    assert.equal([field.type, field.format, field.minimum, field.maximum], ["integer", "int64", 1, 9007199254740991]);
  }
  assert.equal([NewPet.properties.name.minLength, NewPet.properties.name.maxLength], [1, 200]);
});

test("openapi listPets: limit 1..100 default 20, status is a PetStatus, cursor is a string; 200 documents an optional Link (rel=next)", () => {
  const params = Object.fromEntries(
    ops.listPets.parameters.filter((p: Json) => p.in === "query").map((p: Json) => [p.name, p]),
  );
  assert.equal(params.limit.schema, { type: "integer", minimum: 1, maximum: 100, default: 20 });
  assert.equal(params.status.schema, { $ref: "#/components/schemas/PetStatus" });
  assert.is(params.cursor.schema.type, "string");
  const link = resolve(ops.listPets.responses["200"].headers.Link);
  assert.is(link.required, false);
  assert.ok(new RegExp(link.schema.pattern).test('</v1/pets?limit=2&cursor=abc>; rel="next"'));
  assert.equal(ops.listPets.responses["200"].content["application/json"].schema, { $ref: "#/components/schemas/Pets" });
});

test("openapi createPet: requires a NewPet body; 201 returns a Pet with a required Location", () => {
  assert.is(ops.createPet.requestBody.required, true);
  assert.equal(ops.createPet.requestBody.content["application/json"].schema, { $ref: "#/components/schemas/NewPet" });
  const created = ops.createPet.responses["201"];
  assert.is(resolve(created.headers.Location).required, true);
  assert.equal(created.content["application/json"].schema, { $ref: "#/components/schemas/Pet" });
});

test("openapi getPet: deprecated, x-deprecated-sunset 2030-12-05, Deprecation/Sunset/Link headers on 200, 400 and 404", () => {
  assert.is(ops.getPet.deprecated, true);
  assert.is(ops.getPet["x-deprecated-sunset"], "2030-12-05");
  const petId = ops.getPet.parameters.find((p: Json) => p.name === "petId");
  assert.equal(
    [petId.in, petId.required, petId.schema.minimum, petId.schema.maximum],
    ["path", true, 1, 9007199254740991],
  );
  for (const status of ["200", "400", "404"]) {
    const h = ops.getPet.responses[status].headers;
    assert.equal(
      [h.Deprecation, h.Sunset, h.Link].map((x: Json) => resolve(x).required),
      [true, true, true],
      status,
    );
  }
  assert.ok(
    new RegExp(resolve(ops.getPet.responses["200"].headers.Sunset).schema.pattern).test(
      "Thu, 05 Dec 2030 00:00:00 GMT",
    ),
  );
  assert.ok(new RegExp(resolve(ops.getPet.responses["200"].headers.Deprecation).schema.pattern).test("@1795564800"));
});

test("GET {base}/openapi.json is served without a key, as JSON, and names the store's base path in its servers", async () => {
  const store = makeStore({ basePath: "/api/v2" });
  const res = await call(store, "GET", "/api/v2/openapi.json", { auth: false });
  assert.is(res.status, 200);
  assert.is(res.headers["content-type"], "application/json; charset=utf-8");
  const served = JSON.parse(res.body);
  assert.equal(served, buildOpenApi({ basePath: "/api/v2", cors: false }));
  assert.is(served.servers[0].variables.baseUrl.default, "/api/v2");
  const head = await call(store, "HEAD", "/api/v2/openapi.json", { auth: false });
  assert.equal([head.status, head.body, head.headers["content-length"]], [200, "", res.headers["content-length"]]);
  await store.close();
});

test("GET /v1/openapi.json with CORS on equals the committed openapi.json; without, the same without preflights", async () => {
  const committed = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8"));
  const withCors = makeStore({ cors: { origins: ["https://app.example"] } });
  const res = await call(withCors, "GET", "/v1/openapi.json", { auth: false });
  assert.equal(JSON.parse(res.body), committed);
  await withCors.close();
  const store = makeStore();
  const plain = await call(store, "GET", "/v1/openapi.json", { auth: false });
  assert.equal(JSON.parse(plain.body), buildOpenApi({ cors: false }));
  await store.close();
});

test("POST {base}/openapi.json is refused with 405 method_not_allowed and Allow: GET, HEAD", async () => {
  const store = makeStore();
  const res = await call(store, "POST", "/v1/openapi.json", { body: "{}" });
  assert.is(res.status, 405);
  assert.is(res.headers.allow, "GET, HEAD");
  await store.close();
});

test.run();
