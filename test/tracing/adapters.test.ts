/**
 * Traces through every adapter: handle(), the Node adapter (node-mocks-http), hapi, the standalone
 * server, Fastify, Express 4 and 5 (at the root and mounted), the fetch handler and msw each make
 * the same spans for the same requests (names, kinds, parents, attributes), continue the caller's
 * traceparent, and put nothing secret in any span.
 */
import { setupServer } from "msw/node";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { petStoreHandlers } from "../../adapters/msw.ts";
import { createPetStore } from "../../lib/index.ts";
import { baseOf, IN_PROCESS_TARGETS, KEY, type Req, type Target } from "../conformance/targets.ts";
import { recordSpans, registerContext, type SpanView, spanText, viewSpans } from "../support/tracing.ts";

let unregister = () => {};
test.before(() => {
  unregister = registerContext();
});
test.after(() => unregister());

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN = "b7ad6b7169203331";
const NAME = "Adapter Secret Rex";

/** The requests every target gets: a page continuing the caller's trace, a create, a read, a miss. */
function requests(base: string): Req[] {
  const auth = { authorization: `Bearer ${KEY}` };
  return [
    {
      method: "GET",
      path: `${base}/pets?limit=2`,
      headers: { ...auth, traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
    },
    {
      method: "POST",
      path: `${base}/pets`,
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: NAME, categoryId: 1 }),
    },
    { method: "GET", path: `${base}/pets/1`, headers: auth },
    { method: "GET", path: `${base}/nothing-here`, headers: auth },
  ];
}

/** The views with the target's base path written as /v1 and the caller's span by name, comparable across targets. */
function comparable(views: SpanView[], base: string): SpanView[] {
  const text = JSON.stringify(views).replaceAll(`"${base}/`, '"/v1/').replaceAll(` ${base}/`, " /v1/");
  return (JSON.parse(text) as SpanView[]).map((v) => (v.parent === CALLER_SPAN ? { ...v, parent: "caller" } : v));
}

async function spansThrough(target: Target) {
  const recorder = recordSpans();
  const session = await target.open({ tracerProvider: recorder.provider });
  try {
    for (const req of requests(baseOf(target))) await session.send(req);
  } finally {
    await session.close();
  }
  return recorder.spans();
}

test("every in-process adapter makes the spans handle() makes for the same requests", async () => {
  const [first, ...rest] = IN_PROCESS_TARGETS;
  const expected = comparable(viewSpans(await spansThrough(first as Target)), "/v1");
  assert.equal(
    expected
      .filter((v) => v.kind === "SERVER")
      .map((v) => [v.name, v.parent, v.attributes["http.response.status_code"]]),
    [
      ["GET /v1/pets", "caller", 200],
      ["POST /v1/pets", undefined, 201],
      ["GET /v1/pets/{petId}", undefined, 200],
      ["GET", undefined, 404],
    ],
  );
  for (const target of rest) {
    const spans = await spansThrough(target);
    assert.equal(comparable(viewSpans(spans), baseOf(target)), expected, target.name);
    const continued = spans.filter((s) => s.spanContext().traceId === TRACE_ID).map((s) => s.name);
    assert.equal(
      continued.sort(),
      ["GET /v1/pets", "petstore.storage listPets"].map((n) => n.replace("/v1", baseOf(target))).sort(),
      target.name,
    );
    const text = spanText(spans);
    for (const secret of [KEY, NAME]) assert.not.ok(text.includes(secret), `${target.name}: ${secret}`);
  }
});

test("msw: the same spans through fetch() to https://api.example/v1 (url.scheme https)", async () => {
  const recorder = recordSpans();
  const store = createPetStore({ auth: [KEY], tracerProvider: recorder.provider });
  const server = setupServer(...petStoreHandlers(store, { baseUrl: "https://api.example/v1" }));
  server.listen();
  try {
    for (const req of requests("/v1")) {
      await fetch(`https://api.example${req.path}`, { method: req.method, headers: req.headers, body: req.body });
    }
  } finally {
    server.close();
  }
  const direct = recordSpans();
  const plain = createPetStore({ auth: [KEY], tracerProvider: direct.provider });
  for (const req of requests("/v1")) {
    const [path, query] = req.path.split("?");
    await plain.handle({ method: req.method, path: path as string, query, headers: req.headers ?? {}, body: req.body });
  }
  const expected = viewSpans(direct.spans()).map((v) =>
    v.attributes["url.scheme"] === undefined ? v : { ...v, attributes: { ...v.attributes, "url.scheme": "https" } },
  );
  assert.equal(viewSpans(recorder.spans()), expected);
  assert.not.ok(spanText(recorder.spans()).includes(KEY));
});

test.run();
