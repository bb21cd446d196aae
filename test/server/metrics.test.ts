/**
 * PETSTORE_METRICS_PORT: Prometheus metrics on a port of their own. The text passes
 * `promtool check metrics` and counts exactly the requests sent, by method, route template and
 * status, and the storage calls by operation and backend; with 2 workers one scrape gives the whole
 * server's figures; no label ever carries a key, a pet name or a raw path (fuzzed); without
 * prom-client installed the server exits 2 with one line.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { InvalidRecordError } from "../../lib/entries/storage.ts";
import { createPetStore } from "../../lib/index.ts";
import { type Child, spawnServer, startedUrl } from "../support/server-child.ts";

const KEY = "metrics-test-key-5f2c9d";
const AUTH = { authorization: `Bearer ${KEY}` };
const dir = mkdtempSync(join(tmpdir(), "petstore-metrics-"));
const children: Child[] = [];

test.after.each(async () => {
  for (const child of children.splice(0)) await child.stop();
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** promtool, or a loud SKIPPED (a failure with CI=true, where .ci/run installs it). */
const PROMTOOL = spawnSync("promtool", ["--version"], { stdio: "ignore" }).status === 0;
if (!PROMTOOL) {
  if (process.env.CI === "true") {
    test("promtool is installed (CI=true: .ci/run installs the Debian package prometheus)", () => {
      assert.unreachable("promtool not found on PATH");
    });
  } else {
    console.log(
      "\n*** SKIPPED: promtool checks of the metrics text: promtool not found (apt-get install prometheus) ***\n",
    );
  }
}

function promtool(text: string): void {
  if (!PROMTOOL) return;
  const run = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8", timeout: 30_000 });
  assert.is(run.status, 0, `promtool check metrics: ${run.stdout}${run.stderr}`);
}

async function startWithMetrics(env: Record<string, string> = {}) {
  const child = spawnServer({ PORT: "0", PETSTORE_METRICS_PORT: "0", PETSTORE_API_KEYS: KEY, ...env });
  children.push(child);
  const url = (await startedUrl(child)).href.replace(/\/$/, "");
  const line = await child.line(/listening on/);
  const metrics = /metrics: (http:\/\/\S+\/metrics)/.exec(line)?.[1];
  if (metrics === undefined) throw new Error(`no metrics address in the start-up line: ${line}`);
  return { child, url, origin: new URL(url).origin, metrics, line };
}

async function send(url: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<number> {
  // One connection a request: with workers, the primary hands each to the next worker.
  const res = await fetch(url, { ...init, headers: { connection: "close", ...init.headers } });
  await res.arrayBuffer();
  return res.status;
}

async function scrape(metrics: string): Promise<string> {
  const res = await fetch(metrics);
  assert.is(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** `name{labels} value` samples of one metric name, labels as written (e.g. 'a="1",b="2"'). */
function samples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m && m[1] === name) out.set(m[2] ?? "", Number(m[3]));
  }
  return out;
}

const POST_BODY = JSON.stringify({ name: "Rex", categoryId: 1 });

/** Sends a known mix and returns the request counts it must give, by label set. */
async function sendKnownMix(url: string, origin: string, createdTimes = 3): Promise<Map<string, number>> {
  for (let i = 0; i < createdTimes; i++) {
    assert.is(
      await send(`${url}/pets`, {
        method: "POST",
        headers: { ...AUTH, "content-type": "application/json" },
        body: POST_BODY,
      }),
      201,
    );
  }
  assert.is(await send(`${url}/pets?limit=2`, { headers: AUTH }), 200);
  assert.is(await send(`${url}/pets`, { headers: AUTH }), 200);
  assert.is(await send(`${url}/pets/1`, { headers: AUTH }), 200);
  assert.is(await send(`${url}/pets/999999`, { headers: AUTH }), 404);
  assert.is(await send(`${url}/pets`), 401);
  assert.is(await send(`${url}/pets/1`, { method: "DELETE", headers: AUTH }), 405);
  assert.is(await send(`${origin}/no-such-path`), 404);
  assert.is(await send(`${origin}/healthz`), 200); // the server's own routes are not counted
  assert.is(await send(`${origin}/readyz`), 200); // but the storage call of /readyz is
  const m = (method: string, route: string | undefined, status: number) =>
    `http_request_method="${method}",${route === undefined ? "" : `http_route="${route}",`}http_response_status_code="${status}"`;
  return new Map([
    [m("POST", "/v1/pets", 201), createdTimes],
    [m("GET", "/v1/pets", 200), 2],
    [m("GET", "/v1/pets/{petId}", 200), 1],
    [m("GET", "/v1/pets/{petId}", 404), 1],
    [m("GET", "/v1/pets", 401), 1],
    [m("DELETE", "/v1/pets/{petId}", 405), 1],
    [m("GET", undefined, 404), 1],
  ]);
}

test("metrics: the start-up line stays one line and names the metrics address", async () => {
  const { child, line } = await startWithMetrics();
  assert.match(
    line,
    /^Pet Store API listening on http:\/\/127\.0\.0\.1:\d+\/v1 \(storage: memory; metrics: http:\/\/127\.0\.0\.1:\d+\/metrics; GET \/healthz, \/readyz\)$/,
  );
  assert.is(child.stdout().match(/listening on/g)?.length, 1);
});

test("metrics: the text passes promtool and counts exactly the requests sent, by method, route template and status", async () => {
  const { url, origin, metrics } = await startWithMetrics();
  const expected = await sendKnownMix(url, origin);
  const text = await scrape(metrics);
  promtool(text);
  assert.equal(samples(text, "http_server_request_duration_seconds_count"), expected);
  assert.match(text, /# TYPE http_server_request_duration_seconds histogram/);
  assert.not.match(text, /healthz/, "the server's own routes are not counted");
  // Storage calls, by operation and backend: 3 creates, 2 pages, 2 gets (one found, one not).
  assert.equal(
    samples(text, "petstore_storage_operation_duration_seconds_count"),
    new Map([
      ['operation="ready",backend="memory"', 2], // the start-up check and /readyz
      ['operation="createPet",backend="memory"', 3],
      ['operation="listPets",backend="memory"', 2],
      ['operation="getPet",backend="memory"', 2],
    ]),
  );
  assert.match(text, /# TYPE petstore_storage_errors_total counter/);
  assert.match(text, /\nprocess_cpu_seconds_total \d/, "the default process metrics");
  assert.match(text, /\nnodejs_heap_size_used_bytes \d/);
});

test("metrics: only GET and HEAD /metrics answer on the metrics port", async () => {
  const { metrics } = await startWithMetrics();
  assert.is(await send(metrics.replace("/metrics", "/")), 404);
  assert.is(await send(metrics, { method: "POST" }), 405);
  assert.is(await send(metrics, { method: "HEAD" }), 200);
});

test("metrics: a failed storage call counts in petstore_storage_errors_total (the server's observer, in process)", async () => {
  const { createMetrics, loadPromClient } = await import("../../server/metrics.ts");
  const metrics = createMetrics(await loadPromClient());
  metrics.observe({ kind: "storage", operation: "getPet", backend: "redis", durationMs: 2000, failed: true });
  metrics.observe({ kind: "storage", operation: "getPet", backend: "redis", durationMs: 1, failed: false });
  const text = await metrics.registry.metrics();
  promtool(text);
  assert.equal(samples(text, "petstore_storage_errors_total"), new Map([['operation="getPet",backend="redis"', 1]]));
  assert.equal(
    samples(text, "petstore_storage_operation_duration_seconds_count"),
    new Map([['operation="getPet",backend="redis"', 2]]),
  );
});

test("metrics: petstore_invalid_records_total counts every bad record a store meets, by backend, while onError hears each key once a minute", async () => {
  const { createMetrics, loadPromClient } = await import("../../server/metrics.ts");
  const metrics = createMetrics(await loadPromClient());
  const reports: unknown[] = [];
  const bad = new InvalidRecordError("custom", "pets:2", "not valid JSON");
  const pet = { id: 1, name: "Rex", categoryId: 1, status: "sold" as const };
  const store = createPetStore({
    auth: ["k"],
    observe: metrics.observe,
    onError: (error) => reports.push(error),
    storage: {
      kind: "custom",
      create: () => Promise.reject(new Error("read only")),
      get: () => Promise.reject(bad),
      list: ({ onInvalid }) => {
        onInvalid?.(bad);
        return Promise.resolve([pet]);
      },
      ping: async () => {},
      close: async () => {},
    },
  });
  for (let i = 0; i < 3; i++) {
    assert.is(
      (await store.handle({ method: "GET", path: "/v1/pets", headers: { authorization: "Bearer k" } })).status,
      200,
    );
    assert.is(
      (await store.handle({ method: "GET", path: "/v1/pets/2", headers: { authorization: "Bearer k" } })).status,
      500,
    );
  }
  const text = await metrics.registry.metrics();
  promtool(text);
  assert.equal(samples(text, "petstore_invalid_records_total"), new Map([['backend="custom"', 6]]));
  assert.is(reports.length, 1, "reported once a minute");
});

test("metrics: the storage breaker's state (petstore_storage_breaker_open) and its changes are counted", async () => {
  const { createMetrics, loadPromClient } = await import("../../server/metrics.ts");
  const metrics = createMetrics(await loadPromClient());
  metrics.observe({ kind: "breaker", state: "open", backend: "postgres", failures: 5 });
  let text = await metrics.registry.metrics();
  promtool(text);
  assert.equal(samples(text, "petstore_storage_breaker_open"), new Map([['backend="postgres"', 1]]));
  metrics.observe({ kind: "breaker", state: "closed", backend: "postgres", failures: 0 });
  text = await metrics.registry.metrics();
  assert.equal(samples(text, "petstore_storage_breaker_open"), new Map([['backend="postgres"', 0]]));
  assert.equal(
    samples(text, "petstore_storage_breaker_changes_total"),
    new Map([
      ['backend="postgres",state="open"', 1],
      ['backend="postgres",state="closed"', 1],
    ]),
  );
});

test("metrics: with 2 workers one scrape gives the whole server's figures", async () => {
  const { url, origin, metrics, line, child } = await startWithMetrics({
    PETSTORE_WORKERS: "2",
    PETSTORE_STORAGE: `sqlite:${join(dir, "workers.db")}`,
  });
  assert.match(line, /2 workers; metrics: http:\/\//);
  const expected = await sendKnownMix(url, origin, 6);
  const text = await scrape(metrics);
  promtool(text);
  assert.equal(samples(text, "http_server_request_duration_seconds_count"), expected);
  const creates = samples(text, "petstore_storage_operation_duration_seconds_count").get(
    'operation="createPet",backend="sqlite"',
  );
  assert.is(creates, 6);
  assert.match(text, /\nprocess_cpu_seconds_total \d/);
  // Both workers served some of them (otherwise this would prove nothing about aggregation).
  const pids = new Set(
    child
      .stdout()
      .split("\n")
      .filter((l) => l.includes('"msg":"request"'))
      .map((l) => /"pid":(\d+)/.exec(l)?.[1]),
  );
  for (let i = 0; i < 50 && pids.size < 2; i++) {
    await new Promise((r) => setTimeout(r, 100));
    for (const l of child.stdout().split("\n")) if (l.includes('"msg":"request"')) pids.add(/"pid":(\d+)/.exec(l)?.[1]);
  }
  assert.is(pids.size, 2);
});

/** A small deterministic generator (the fuzz is reproducible from its seed). */
function generator(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const word = () => `zq${Math.floor(next() * 2 ** 32).toString(36)}x`;
  return { next, pick, word };
}

test("metrics: labels never carry a key, a pet name or a raw path (fuzzed requests)", async () => {
  const { url, origin, metrics } = await startWithMetrics();
  const g = generator(0x5eed19);
  const secrets: string[] = [KEY];
  for (let i = 0; i < 150; i++) {
    const marker = g.word();
    secrets.push(marker);
    const path = g.pick([
      `/v1/pets/${marker}`,
      `/v1/${marker}`,
      `/v1/pets/${marker}/${KEY}`,
      `/v1/pets?status=${marker}&key=${KEY}`,
      `/${marker}`,
      `/v1/pets/${Math.floor(g.next() * 1000) + 1}`,
      `/v1/pets?cursor=${marker}`,
    ]);
    const method = g.pick(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]);
    const headers: Record<string, string> = {
      authorization: g.pick([`Bearer ${KEY}`, `Bearer ${marker}`, KEY, `Basic ${marker}`]),
      "x-request-id": marker,
    };
    let body: string | undefined;
    if (method === "POST" || method === "PUT" || method === "PATCH") {
      headers["content-type"] = "application/json";
      body = JSON.stringify({ name: `name-${marker}`, categoryId: 1 });
    }
    await send(`${origin}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  }
  // And pets that certainly exist, with names to look for.
  for (let i = 0; i < 10; i++) {
    const name = g.word();
    secrets.push(name);
    await send(`${url}/pets`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: JSON.stringify({ name, categoryId: 1 }),
    });
  }
  const text = await scrape(metrics);
  promtool(text);
  for (const secret of secrets) assert.not.ok(text.includes(secret), `the metrics text contains ${secret}`);
  const routes = new Set([...text.matchAll(/http_route="([^"]*)"/g)].map((m) => m[1]));
  for (const route of routes) assert.ok(["/v1/pets", "/v1/pets/{petId}"].includes(route as string), `route ${route}`);
  const methods = new Set([...text.matchAll(/http_request_method="([^"]*)"/g)].map((m) => m[1]));
  for (const method of methods) assert.match(method as string, /^(GET|HEAD|POST|PUT|DELETE|PATCH|OPTIONS|_OTHER)$/);
});

test("metrics: PETSTORE_METRICS_PORT without prom-client installed exits 2 with one line saying what to install", async () => {
  const hidden = spawnServer(
    {
      PORT: "0",
      PETSTORE_METRICS_PORT: "0",
      PETSTORE_API_KEYS: KEY,
      NODE_OPTIONS: "--import ./test/support/hide-prom-client.mjs",
    },
    [],
  );
  children.push(hidden);
  assert.is(await hidden.exited(), 2);
  assert.is(hidden.stderr().split("\n").length, 2, JSON.stringify(hidden.stderr()));
  assert.match(hidden.stderr(), /PETSTORE_METRICS_PORT needs the prom-client package: npm install prom-client/);
  assert.not.match(hidden.stdout(), /listening/);
});

test("metrics: a bad PETSTORE_METRICS_PORT exits 2 with one line naming it", async () => {
  const child = spawnServer({ PORT: "0", PETSTORE_METRICS_PORT: "metrics", PETSTORE_API_KEYS: KEY });
  children.push(child);
  assert.is(await child.exited(), 2);
  assert.match(
    child.stderr(),
    /^petstore: PETSTORE_METRICS_PORT must be an integer from 0 to 65535 \(got "metrics"\)\n$/,
  );
});

test("metrics: a metrics port already in use exits 2 with one line saying so and how to choose another", async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
  const port = (blocker.address() as AddressInfo).port;
  try {
    const child = spawnServer({ PORT: "0", PETSTORE_METRICS_PORT: String(port), PETSTORE_API_KEYS: KEY });
    children.push(child);
    assert.is(await child.exited(), 2);
    assert.match(
      child.stderr(),
      new RegExp(
        `^petstore: metrics: port ${port} on 127\\.0\\.0\\.1 is already in use \\(EADDRINUSE\\): choose another with PETSTORE_METRICS_PORT or --metrics-port .*\n$`,
      ),
    );
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
});

test.run();
