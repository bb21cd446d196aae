/**
 * The standalone server's traces: OTLP over HTTP to a receiver this test starts (JSON and
 * protobuf), from every worker, flushed on SIGTERM (before the batch's own delay), with the
 * caller's trace id kept, the service name and the `trace_id` in each request's log line; the
 * OTEL_* variables checked; without the SDK's packages, one line and exit 2. `OTEL_TRACES_EXPORTER=console`
 * prints each span as a line; an endpoint that fails is logged once, as it first fails.
 */
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ConfigError } from "../../server/config.ts";
import { tracingConfig } from "../../server/tracing.ts";
import { type Child, jsonLines, spawnServer, startedUrl } from "../support/server-child.ts";

const KEY = "traces-test-key";
const dir = mkdtempSync(join(tmpdir(), "petstore-traces-"));
const children: Child[] = [];
test.after.each(async () => {
  for (const child of children.splice(0)) await child.stop();
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** An OTLP/HTTP receiver: every body posted to /v1/traces, with its content type. */
async function startReceiver() {
  const bodies: { type: string; body: Buffer }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces")
        bodies.push({ type: req.headers["content-type"] ?? "", body: Buffer.concat(chunks) });
      const json = req.headers["content-type"]?.includes("json");
      res
        .writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" })
        .end(json ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { url, bodies, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

interface OtlpSpan {
  name: string;
  traceId: string;
  parentSpanId?: string;
  attributes: { key: string; value: Record<string, unknown> }[];
}
interface OtlpJson {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[] };
    scopeSpans: { spans: OtlpSpan[] }[];
  }[];
}

/** Every span of the JSON bodies, with its resource's service name and pid. */
function spansOf(bodies: { body: Buffer }[]) {
  return bodies.flatMap(({ body }) =>
    (JSON.parse(body.toString()) as OtlpJson).resourceSpans.flatMap((rs) => {
      const attr = (key: string) => rs.resource.attributes.find((a) => a.key === key)?.value;
      const service = attr("service.name")?.stringValue;
      const pid = String(attr("process.pid")?.intValue);
      return rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ ...span, service, pid })));
    }),
  );
}

const get = (url: URL, path: string, headers: Record<string, string> = {}) =>
  fetch(new URL(path, url), { headers: { authorization: `Bearer ${KEY}`, connection: "close", ...headers } });

test("OTLP http/json from two workers: every request's span, flushed on SIGTERM, the caller's trace kept, trace_id logged", async () => {
  const receiver = await startReceiver();
  try {
    const child = spawnServer({
      PORT: "0",
      PETSTORE_API_KEYS: KEY,
      PETSTORE_STORAGE: `sqlite:${join(dir, "workers.db")}`,
      PETSTORE_WORKERS: "2",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "pets-under-test",
      OTEL_BSP_SCHEDULE_DELAY: "60000", // nothing leaves before the stop: SIGTERM must flush it all
    });
    children.push(child);
    const url = await startedUrl(child);
    assert.match(child.stdout(), new RegExp(`traces: OTLP http/json to ${receiver.url}/v1/traces`));
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const headers: Record<string, string> = i === 0 ? { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } : {};
      statuses.push((await get(url, "/v1/pets?limit=3", headers)).status);
    }
    assert.ok(statuses.every((s) => s === 200));
    assert.is(receiver.bodies.length, 0, "nothing exported yet: the batch waits a minute");
    child.process.kill("SIGTERM");
    assert.is(await child.exited(20_000), 0);
    assert.ok(receiver.bodies.every((b) => b.type.startsWith("application/json")));
    const spans = spansOf(receiver.bodies);
    const pages = spans.filter((s) => s.name === "GET /v1/pets");
    assert.is(pages.length, 40, "one span per request, all flushed");
    assert.is(spans.filter((s) => s.name === "petstore.storage listPets").length, 40);
    assert.ok(spans.every((s) => s.service === "pets-under-test"));
    assert.is(new Set(pages.map((s) => s.pid)).size, 2, "both workers export");
    const continued = pages.filter((s) => s.traceId === traceId);
    assert.is(continued.length, 1);
    assert.is(continued[0]?.parentSpanId, "00f067aa0ba902b7");
    const logged = jsonLines(child.stdout()).filter((l) => l.msg === "request");
    assert.is(logged.length, 40);
    assert.equal(new Set(logged.map((l) => l.trace_id)), new Set(pages.map((s) => s.traceId)));
  } finally {
    await receiver.close();
  }
});

test("OTLP http/protobuf (the default) from one process: spans exported as protobuf on SIGTERM", async () => {
  const receiver = await startReceiver();
  try {
    const child = spawnServer({
      PORT: "0",
      PETSTORE_API_KEYS: KEY,
      PETSTORE_STORAGE: "memory",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
    });
    children.push(child);
    const url = await startedUrl(child);
    assert.match(child.stdout(), /traces: OTLP http\/protobuf/);
    assert.is((await get(url, "/v1/pets/1")).status, 404);
    child.process.kill("SIGTERM");
    assert.is(await child.exited(20_000), 0);
    assert.ok(receiver.bodies.length >= 1);
    const body = Buffer.concat(receiver.bodies.map((b) => b.body)).toString("latin1");
    assert.ok(receiver.bodies.every((b) => b.type.startsWith("application/x-protobuf")));
    for (const text of ["GET /v1/pets/{petId}", "petstore.storage getPet", "petstore", "http.route"]) {
      assert.ok(body.includes(text), text);
    }
    assert.not.ok(body.includes(KEY), "never the key");
  } finally {
    await receiver.close();
  }
});

test("OTEL_TRACES_EXPORTER=console: each span is one JSON line on stdout, flushed on SIGTERM", async () => {
  const child = spawnServer({
    PORT: "0",
    PETSTORE_API_KEYS: KEY,
    PETSTORE_STORAGE: "memory",
    OTEL_TRACES_EXPORTER: "console",
    OTEL_SERVICE_NAME: "printed-pets",
  });
  children.push(child);
  const url = await startedUrl(child);
  assert.match(child.stdout(), /; traces: printed on stdout;/);
  assert.is((await get(url, "/v1/pets/1")).status, 404);
  child.process.kill("SIGTERM");
  assert.is(await child.exited(20_000), 0, child.stderr());
  const spans = jsonLines(child.stdout()).filter((l) => l.msg === "span");
  const request = spans.find((s) => s.name === "GET /v1/pets/{petId}");
  assert.ok(request, child.stdout());
  assert.match(String(request.traceId), /^[0-9a-f]{32}$/);
  assert.is((request.attributes as Record<string, unknown>)["http.response.status_code"], 404);
  assert.is((request.resource as Record<string, unknown>)["service.name"], "printed-pets");
  const storage = spans.find((s) => s.name === "petstore.storage getPet");
  assert.is(storage?.parentSpanId, request.spanId);
  assert.not.ok(child.stdout().includes(KEY), "never the key");
});

test("OTLP endpoint where nothing listens: one warning naming it and the error, as the first batch fails", async () => {
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v1/traces`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const child = spawnServer({
    PORT: "0",
    PETSTORE_API_KEYS: KEY,
    PETSTORE_STORAGE: "memory",
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint,
    OTEL_BSP_SCHEDULE_DELAY: "50", // a batch every 50 ms: several fail during the test
    OTEL_EXPORTER_OTLP_TIMEOUT: "2000", // the exporter's retries stop sooner, so the stop is quick
  });
  children.push(child);
  const url = await startedUrl(child);
  const warnings = () => jsonLines(child.stdout()).filter((l) => /cannot export spans/.test(String(l.msg)));
  assert.is((await get(url, "/v1/pets")).status, 200);
  // Sooner than the exporter's own report (its retries last seconds, up to its timeout): it fails at the first attempt.
  await child.line(/cannot export spans/, 5_000);
  for (let batch = 0; batch < 5; batch++) {
    assert.is((await get(url, "/v1/pets")).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const [warning, ...more] = warnings();
  assert.is(more.length, 0, "once, not once per batch");
  assert.is(warning?.level, 40);
  assert.is(warning?.endpoint, endpoint);
  assert.match(String(warning?.error), /ECONNREFUSED/);
  assert.match(String(warning?.msg), new RegExp(`cannot export spans to ${endpoint}: .*ECONNREFUSED`));
});

test("config: the OTEL_* variables that cannot work are a ConfigError naming the variable", () => {
  const base = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };
  assert.is(tracingConfig({}), undefined);
  assert.equal(tracingConfig(base), {
    exporter: "otlp",
    protocol: "http/protobuf",
    endpoint: "http://127.0.0.1:4318/v1/traces",
    sampler: "parentbased_always_on",
    ratio: 1,
    batch: {},
  });
  assert.equal(tracingConfig({ ...base, OTEL_BSP_SCHEDULE_DELAY: "60000", OTEL_BSP_MAX_QUEUE_SIZE: "100" })?.batch, {
    scheduledDelayMillis: 60_000,
    maxQueueSize: 100,
  });
  assert.is(tracingConfig({ ...base, OTEL_SDK_DISABLED: "true" }), undefined);
  assert.is(tracingConfig({ ...base, OTEL_TRACES_EXPORTER: "none" }), undefined);
  assert.is(tracingConfig({ ...base, OTEL_TRACES_EXPORTER: "otlp" })?.exporter, "otlp");
  assert.equal(tracingConfig({ OTEL_TRACES_EXPORTER: "console" }), {
    exporter: "console",
    sampler: "parentbased_always_on",
    ratio: 1,
    batch: {},
  });
  assert.is(tracingConfig({ OTEL_TRACES_EXPORTER: "otlp" }), undefined, "otlp without an endpoint: no traces");
  assert.is(
    tracingConfig({ ...base, OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" })?.ratio,
    0.25,
  );
  const bad: [Record<string, string>, RegExp][] = [
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, /OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/],
    [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/xml" }, /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be/],
    [{ OTEL_TRACES_SAMPLER: "sometimes" }, /OTEL_TRACES_SAMPLER must be one of/],
    [{ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }, /OTEL_TRACES_SAMPLER_ARG must be a ratio/],
    [{ OTEL_TRACES_EXPORTER: "zipkin" }, /OTEL_TRACES_EXPORTER must be otlp, console or none/],
    [{ OTEL_BSP_SCHEDULE_DELAY: "soon" }, /OTEL_BSP_SCHEDULE_DELAY must be a whole number from 1/],
  ];
  for (const [env, message] of bad) {
    assert.throws(
      () => tracingConfig({ ...base, ...env }),
      (e: unknown) => e instanceof ConfigError && message.test((e as Error).message),
    );
  }
});

test("server: an OTLP endpoint without the SDK's packages exits 2 with one line naming what to install", async () => {
  const child = spawnServer({
    PORT: "0",
    PETSTORE_API_KEYS: KEY,
    PETSTORE_STORAGE: "memory",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
    NODE_OPTIONS: "--import ./test/support/hide-otel-sdk.mjs",
  });
  children.push(child);
  assert.is(await child.exited(), 2);
  const lines = child.stderr().trim().split("\n");
  assert.is(lines.length, 1, child.stderr());
  assert.match(
    lines[0] as string,
    /^petstore: traces: an OTLP endpoint is set but @opentelemetry\/sdk-trace.* not installed \(npm install /,
  );
});

test.run();
