/**
 * Traces from the core (contract 1.3, "Traces (OpenTelemetry)"), through `handle()` and the
 * in-process operations on memory: the request's span (name, kind, HTTP attributes, status), the
 * storage call's child span, the caller's `traceparent` continued, a host's span as parent, errors
 * recorded, and nothing secret in any span.
 */
import { context, ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { tokenId } from "../../lib/auth/principal.ts";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { memoryStorage } from "../../lib/entries/storage.ts";
import type { PetStoreOptions } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";
import { AUTH, call, KEY } from "../support/helpers.ts";
import { recordSpans, registerContext, spanText, viewSpans } from "../support/tracing.ts";

let unregister: () => void = () => {};
test.before(() => {
  unregister = registerContext();
});
test.after(() => unregister());

const recorder = recordSpans();
test.before.each(() => recorder.reset());

const traced = (options: Partial<PetStoreOptions> = {}) =>
  createPetStore({ auth: [KEY], onError: () => {}, tracerProvider: recorder.provider, ...options });

const NAME = "Secret Rex the Third";
const IDEMPOTENCY = "idem-key-that-must-not-leak-0001";

test("a page: one SERVER span `GET /v1/pets` with the HTTP attributes and the caller (enduser.id), its storage call a child", async () => {
  const store = traced();
  const response = await call(store, "GET", "/v1/pets", { query: "limit=5&status=available" });
  assert.is(response.status, 200);
  assert.equal(viewSpans(recorder.spans()), [
    {
      name: "petstore.storage listPets",
      kind: "INTERNAL",
      parent: "GET /v1/pets",
      attributes: { "db.system.name": "memory", "db.operation.name": "listPets" },
      error: false,
      exception: undefined,
    },
    {
      name: "GET /v1/pets",
      kind: "SERVER",
      parent: undefined,
      attributes: {
        "http.request.method": "GET",
        "http.route": "/v1/pets",
        "http.response.status_code": 200,
        "url.path": "/v1/pets",
        "url.scheme": "http",
        "enduser.id": tokenId(KEY),
      },
      error: false,
      exception: undefined,
    },
  ]);
});

test("a create and a read: the route templates, never the key, the name, the body or the idempotency key", async () => {
  const store = traced();
  const created = await call(store, "POST", "/v1/pets", {
    body: JSON.stringify({ name: NAME, categoryId: 1 }),
    headers: { "idempotency-key": IDEMPOTENCY },
  });
  assert.is(created.status, 201);
  const id = (JSON.parse(created.body) as { id: number }).id;
  assert.is((await call(store, "GET", `/v1/pets/${id}`)).status, 200);
  const views = viewSpans(recorder.spans());
  const servers = views.filter((s) => s.kind === "SERVER");
  assert.equal(
    servers.map((s) => [s.name, s.attributes["http.route"], s.attributes["url.path"]]),
    [
      ["POST /v1/pets", "/v1/pets", "/v1/pets"],
      ["GET /v1/pets/{petId}", "/v1/pets/{petId}", `/v1/pets/${id}`],
    ],
  );
  assert.ok(views.some((s) => s.name === "petstore.storage createPet" && s.parent === "POST /v1/pets"));
  assert.ok(views.some((s) => s.name === "petstore.storage getPet" && s.parent === "GET /v1/pets/{petId}"));
  const text = spanText(recorder.spans());
  for (const secret of [KEY, AUTH, NAME, IDEMPOTENCY]) assert.not.ok(text.includes(secret), secret);
});

test("the caller's traceparent is continued: same trace id, the caller's span the parent", async () => {
  const store = traced();
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const parentId = "00f067aa0ba902b7";
  const response = await call(store, "GET", "/v1/pets", { headers: { traceparent: `00-${traceId}-${parentId}-01` } });
  assert.is(response.status, 200);
  const server = recorder.spans().find((s) => s.kind === SpanKind.SERVER);
  assert.is(server?.spanContext().traceId, traceId);
  assert.is(server?.parentSpanContext?.spanId, parentId);
  assert.ok(recorder.spans().every((s) => s.spanContext().traceId === traceId));
});

test("under a host's span (an HTTP instrumentation's), the store's span is its INTERNAL child `petstore {operation}`", async () => {
  const store = traced();
  const host = recorder.provider.getTracer("host").startSpan("GET", { kind: SpanKind.SERVER });
  await context.with(trace.setSpan(ROOT_CONTEXT, host), () => call(store, "GET", "/v1/pets"));
  host.end();
  const views = viewSpans(recorder.spans());
  assert.equal(
    views.map((s) => [s.name, s.kind, s.parent]),
    [
      ["petstore.storage listPets", "INTERNAL", "petstore listPets"],
      ["petstore listPets", "INTERNAL", "GET"],
      ["GET", "SERVER", undefined],
    ],
  );
  assert.is(views[1]?.attributes["http.route"], "/v1/pets");
});

test("no route: the span is named by the method alone, without http.route; 401 and 404 are not errors", async () => {
  const store = traced();
  assert.is((await call(store, "GET", "/nowhere")).status, 404);
  assert.is((await call(store, "GET", "/v1/pets", { auth: false })).status, 401);
  const views = viewSpans(recorder.spans());
  assert.equal(
    views.map((s) => [s.name, s.attributes["http.route"], s.attributes["http.response.status_code"], s.error]),
    [
      ["GET", undefined, 404, false],
      ["GET /v1/pets", "/v1/pets", 401, false],
    ],
  );
});

/** Memory storage whose every call fails as an outage would. */
function failingStorage(): PetStorage {
  const storage = memoryStorage();
  const down = () =>
    Promise.reject(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" }));
  return Object.assign(Object.create(storage) as PetStorage, { list: down, get: down, create: down });
}

test("a failing storage call: the storage span is ERROR with the exception; the request's span is ERROR with error.type", async () => {
  const store = traced({ storage: failingStorage(), breaker: false });
  assert.is((await call(store, "GET", "/v1/pets")).status, 503);
  const [storage, request] = viewSpans(recorder.spans());
  assert.is(storage?.name, "petstore.storage listPets");
  assert.ok(storage?.error);
  assert.is(storage?.attributes["error.type"], "storage_unavailable");
  assert.ok(storage?.exception);
  assert.is(request?.name, "GET /v1/pets");
  assert.ok(request?.error);
  assert.is(request?.attributes["error.type"], "503");
});

test("in-process operations make INTERNAL spans, parents of their storage calls; a refused input is not an error", async () => {
  const store = traced();
  const pet = await store.createPet({ name: NAME, categoryId: 1 });
  await store.getPet(pet.id);
  await store.listPets({ limit: 1 });
  await store.createPet({ name: "", categoryId: 1 }).catch(() => {});
  const views = viewSpans(recorder.spans());
  assert.equal(
    views.map((s) => [s.name, s.kind, s.parent, s.error]),
    [
      ["petstore.storage createPet", "INTERNAL", "petstore createPet", false],
      ["petstore createPet", "INTERNAL", undefined, false],
      ["petstore.storage getPet", "INTERNAL", "petstore getPet", false],
      ["petstore getPet", "INTERNAL", undefined, false],
      ["petstore.storage listPets", "INTERNAL", "petstore listPets", false],
      ["petstore listPets", "INTERNAL", undefined, false],
      ["petstore createPet", "INTERNAL", undefined, false],
    ],
  );
  assert.not.ok(spanText(recorder.spans()).includes(NAME));
});

test("a sampler that drops the trace: nothing recorded, the answer unchanged", async () => {
  const { TracerProvider, AlwaysOffSampler } = await import("@opentelemetry/sdk-trace");
  const store = traced({ tracerProvider: new TracerProvider({ sampler: new AlwaysOffSampler() }) });
  const response = await call(store, "GET", "/v1/pets");
  assert.is(response.status, 200);
  assert.is(recorder.spans().length, 0);
});

test("the request observation carries the trace id of the request's span", async () => {
  const heard: (string | undefined)[] = [];
  const store = traced({ observe: (o) => (o.kind === "request" ? heard.push(o.traceId) : undefined) });
  await call(store, "GET", "/v1/pets");
  const server = recorder.spans().find((s) => s.kind === SpanKind.SERVER);
  assert.equal(heard, [server?.spanContext().traceId]);
});

test("tracerProvider must have getTracer", () => {
  assert.throws(
    () => createPetStore({ auth: [KEY], tracerProvider: {} as never }),
    /tracerProvider must be a TracerProvider/,
  );
});

test.run();
