/**
 * The test kit's `tracerProvider`: a test asserts on the store's spans with an in-memory exporter,
 * through startTestServer (a real socket: the create's body is read across awaits) and
 * createTestStore, without registering anything else; the kit registers a context manager when
 * none is, so that storage spans keep their request's span as parent.
 */
import { context, propagation } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestStore, startTestServer } from "../../testing/index.ts";
import { viewSpans } from "../support/tracing.ts";

function recorder() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  return { exporter, tracerProvider };
}

// The kit registers a context manager for the process: removed after this file (one process runs every file).
test.after(() => {
  context.disable();
  propagation.disable();
});

test("startTestServer({ tracerProvider }): a page and a create over a socket, each storage call the child of its request", async () => {
  context.disable(); // as in a user's test process: no context manager registered before the kit
  const { exporter, tracerProvider } = recorder();
  const server = await startTestServer({ tracerProvider });
  try {
    const auth = { authorization: `Bearer ${server.key}` };
    assert.is((await fetch(`${server.url}/pets`, { headers: auth })).status, 200);
    const created = await fetch(`${server.url}/pets`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "Kit Rex", categoryId: 1 }),
    });
    assert.is(created.status, 201);
  } finally {
    await server.close();
  }
  assert.equal(
    viewSpans(exporter.getFinishedSpans()).map((s) => [s.name, s.kind, s.parent]),
    [
      ["petstore.storage listPets", "INTERNAL", "GET /v1/pets"],
      ["GET /v1/pets", "SERVER", undefined],
      ["petstore.storage createPet", "INTERNAL", "POST /v1/pets"],
      ["POST /v1/pets", "SERVER", undefined],
    ],
  );
});

test("createTestStore({ tracerProvider }): the same spans through its fetch handler", async () => {
  const { exporter, tracerProvider } = recorder();
  const kit = await createTestStore({ tracerProvider });
  const response = await kit.fetch(
    new Request("http://test.local/v1/pets?limit=1", { headers: { authorization: `Bearer ${kit.key}` } }),
  );
  assert.is(response.status, 200);
  assert.equal(
    exporter.getFinishedSpans().map((s) => s.name),
    ["petstore.storage listPets", "GET /v1/pets"],
  );
});

test("tracerProvider that is not one is refused, naming it", async () => {
  try {
    await createTestStore({ tracerProvider: {} as never });
    assert.unreachable("accepted");
  } catch (error) {
    assert.match((error as Error).message, /tracerProvider must be a TracerProvider/);
  }
});

test.run();
