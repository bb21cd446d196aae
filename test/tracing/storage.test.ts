/**
 * Traces on every backend: each storage call of a request is a `petstore.storage {operation}`
 * child of the request's span with the backend's `db.system.name`, also after the awaits of a
 * create on a backend that answers asynchronously (the context manager carries the parent), and
 * a backend that fails sets the storage span's status to ERROR with the exception.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createPetStore } from "../../lib/index.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import { type Backend, backends } from "../storage/backends.ts";
import { RUN } from "../storage/services.ts";
import { call, KEY } from "../support/helpers.ts";
import { recordSpans, registerContext, spanText, viewSpans } from "../support/tracing.ts";

const DB_SYSTEM: Record<Backend["name"], string> = {
  memory: "memory",
  sqlite: "sqlite",
  redis: "redis",
  "redis-cluster": "redis",
  postgres: "postgresql",
};

function traces(backend: Backend): void {
  const s = suite(`traces: ${backend.name}`);
  const ns = `${RUN}_tr${backend.name.replace(/[^a-z]/g, "").slice(0, 6)}`;
  const recorder = recordSpans();
  let unregister = () => {};
  let storage: PetStorage | undefined;
  s.before(async () => {
    unregister = registerContext();
    storage = await backend.open(ns);
  });
  s.after(async () => {
    unregister();
    await storage?.close();
    await backend.cleanup([ns]);
  });

  s(`${backend.name}: a create, a read and a page: each storage call the child of its request's span`, async () => {
    const store = createPetStore({
      auth: [KEY],
      storage: storage as PetStorage,
      tracerProvider: recorder.provider,
      onError: () => {},
    });
    const created = await call(store, "POST", "/v1/pets", {
      body: JSON.stringify({ name: "Traced Rex", categoryId: 1 }),
      headers: { "idempotency-key": `trace-${RUN}` },
    });
    assert.is(created.status, 201);
    const id = (JSON.parse(created.body) as { id: number }).id;
    assert.is((await call(store, "GET", `/v1/pets/${id}`)).status, 200);
    assert.is((await call(store, "GET", "/v1/pets", { query: "limit=2" })).status, 200);
    const views = viewSpans(recorder.spans());
    const storageSpans = views.filter((v) => v.name.startsWith("petstore.storage"));
    assert.ok(storageSpans.length >= 3, JSON.stringify(views));
    const requests = ["POST /v1/pets", "GET /v1/pets/{petId}", "GET /v1/pets"];
    for (const span of storageSpans) {
      assert.ok(requests.includes(span.parent as string), `${span.name} under ${span.parent}`);
      assert.is(span.attributes["db.system.name"], DB_SYSTEM[backend.name]);
      assert.is(span.kind, backend.name === "memory" ? "INTERNAL" : "CLIENT");
      assert.not.ok(span.error);
    }
    for (const [operation, parent] of [
      ["createPet", "POST /v1/pets"],
      ["getPet", "GET /v1/pets/{petId}"],
      ["listPets", "GET /v1/pets"],
    ]) {
      assert.ok(
        storageSpans.some((v) => v.attributes["db.operation.name"] === operation && v.parent === parent),
        `${operation} under ${parent}: ${JSON.stringify(storageSpans.map((v) => [v.name, v.parent]))}`,
      );
    }
    assert.not.ok(spanText(recorder.spans()).includes("Traced Rex"));
    // Every span of a request is in its trace.
    const spans = recorder.spans();
    for (const span of spans) {
      const parent = spans.find((p) => p.spanContext().spanId === span.parentSpanContext?.spanId);
      if (parent !== undefined) assert.is(span.spanContext().traceId, parent.spanContext().traceId);
    }
  });

  s(`${backend.name}: a storage call that fails is an ERROR span with the exception`, async () => {
    recorder.reset();
    const failing = Object.assign(Object.create(storage as PetStorage) as PetStorage, {
      get: () => Promise.reject(new Error("the backend went away")),
    });
    const store = createPetStore({
      auth: [KEY],
      storage: failing,
      tracerProvider: recorder.provider,
      breaker: false,
      onError: () => {},
    });
    const response = await call(store, "GET", "/v1/pets/1");
    assert.ok(response.status >= 500, String(response.status));
    const [span] = viewSpans(recorder.spans()).filter((v) => v.name === "petstore.storage getPet");
    assert.ok(span?.error);
    assert.ok(span?.exception);
  });
}

for (const backend of backends("traces")) traces(backend);
