/**
 * The peer ranges, each tested from the packed tarballs: fresh projects that already hold, one at a
 * time, what an embedder's project may hold (OpenTelemetry SDK 2 and 3, and the API's floor, 1.0;
 * prom-client 14 and 15; swagger-ui-dist 4; Express 4 and 5; Fastify 5; hapi 21; msw 2; each
 * supported major of each Keyv driver). In each, `npm install <lib tarball>` succeeds without
 * `--legacy-peer-deps` (an ERESOLVE fails the test), and a store answers every published
 * conformance case there, through that host, on that driver; in the OpenTelemetry projects its
 * spans reach the project's own SDK (an in-memory exporter of that SDK). Then petstore-server
 * from its tarball, in an empty project: Prometheus metrics, `/docs`, OTLP export to a receiver
 * and every storage backend (a SQLite file, Redis, Postgres), with nothing more to install.
 *
 * Installs come from the npm cache where it has the packages (`--offline`), else from the registry
 * (`--prefer-offline`), one project after another. They run with `--ignore-scripts`: the only
 * install script of these trees is sqlite3's, whose build from source (no prebuilt binary is
 * reachable here) takes minutes; the repository's build of its Node-API addon is copied in instead
 * (test/package/install.test.ts checks that the library itself brings no install script).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { conformanceCases, storageCases } from "../../conformance/index.ts";
import { POSTGRES_URL, REDIS_URL } from "../storage/services.ts";
import { installInto, placeSqliteAddon, startNode, versionOf, whenUp } from "../support/packed.ts";
import { packedPackage } from "../support/tarball.ts";

const TMP = mkdtempSync(join(tmpdir(), "petstore-matrix-"));
test.after(() => rmSync(TMP, { recursive: true, force: true }));

let made = 0;

/**
 * A fresh project that holds `packages` (its dependencies, as a project has them before it adds
 * the library) and installs the library's tarball (and the server's, with `server`) as a user does:
 * no --legacy-peer-deps, no --force. Throws with npm's output (an ERESOLVE) when npm refuses.
 */
function project(packages: string[], options: { server?: boolean } = {}): string {
  const dir = join(TMP, `project-${++made}`);
  mkdirSync(dir);
  const dependencies = Object.fromEntries(
    packages.map((spec) => {
      const at = spec.lastIndexOf("@");
      return [spec.slice(0, at), spec.slice(at + 1)];
    }),
  );
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "matrix", private: true, type: "module", dependencies }),
  );
  const { tarball, serverTarball } = packedPackage();
  const tarballs = options.server ? [tarball, serverTarball] : [tarball];
  installInto(dir, ["--ignore-scripts", ...tarballs], 240_000);
  placeSqliteAddon(join(dir, "node_modules"));
  return dir;
}

/** The version installed at the project's top level. */
const installed = (dir: string, pkg: string): string =>
  JSON.parse(readFileSync(join(dir, "node_modules", pkg, "package.json"), "utf8")).version;

/**
 * The program each project runs: every conformance case through one host (HOST: fetch, express,
 * fastify, hapi, msw) on one storage (STORAGE: memory, sqlite, redis, postgres), with the
 * project's own OpenTelemetry SDK registered (OTEL: sdk1, sdk2, sdk3). One JSON line out.
 */
const PROGRAM = `
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPetStore, memoryStorage } from "petstore-lib";
import { conformanceCases, storageCases } from "petstore-lib/conformance";

const { HOST = "fetch", STORAGE = "memory", OTEL = "", REDIS_URL, POSTGRES_URL } = process.env;
const KEY = "matrix-key";
const NS = "petstore_matrix_" + process.pid;
const files = mkdtempSync(join(tmpdir(), "petstore-matrix-files-"));

// The project's own SDK, registered as an application registers it.
let exporter;
if (OTEL === "sdk1" || OTEL === "sdk2") {
  const { NodeTracerProvider } = await import("@opentelemetry/sdk-trace-node");
  const { InMemorySpanExporter, SimpleSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
  exporter = new InMemorySpanExporter();
  if (OTEL === "sdk1") {
    const provider = new NodeTracerProvider();
    provider.addSpanProcessor(new SimpleSpanProcessor(exporter));
    provider.register();
  } else {
    new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();
  }
} else if (OTEL === "sdk3") {
  const api = await import("@opentelemetry/api");
  const sdk = await import("@opentelemetry/sdk-trace");
  const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
  const { W3CTraceContextPropagator } = await import("@opentelemetry/core");
  exporter = new sdk.InMemorySpanExporter();
  api.trace.setGlobalTracerProvider(new sdk.TracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor({ exporter })] }));
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

const storages = await import("petstore-lib/storage");
async function openStorage() {
  if (STORAGE === "sqlite") return storages.sqliteStorage({ path: join(files, "pets.db"), table: NS });
  if (STORAGE === "redis") return storages.redisStorage({ url: REDIS_URL, namespace: NS });
  if (STORAGE === "postgres") return storages.postgresStorage({ url: POSTGRES_URL, table: NS });
  return memoryStorage();
}

// Each host serves the store of the moment; a new store (an empty storage) for each case.
let store;
let fetchHandler;
let origin = "";
let close = async () => {};
async function mount() {
  await close();
  if (HOST === "fetch") {
    const { createFetchHandler } = await import("petstore-lib/fetch");
    fetchHandler = createFetchHandler(store);
  } else if (HOST === "msw") {
    const { setupServer } = await import("msw/node");
    const { petStoreHandlers } = await import("petstore-lib/msw");
    const server = setupServer(...petStoreHandlers(store, { baseUrl: "http://pets.test/v1" }));
    server.listen({ onUnhandledRequest: "error" });
    fetchHandler = (request) => fetch(new Request(new URL(new URL(request.url).pathname + new URL(request.url).search, "http://pets.test"), request));
    close = async () => server.close();
  } else if (HOST === "express") {
    const { default: express } = await import("express");
    const { createNodeHandler } = await import("petstore-lib/node-http");
    const app = express();
    app.use(createNodeHandler(store));
    const server = http.createServer(app);
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = "http://127.0.0.1:" + server.address().port;
    close = async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); };
  } else if (HOST === "fastify") {
    const { default: Fastify } = await import("fastify");
    const { petStorePlugin, petStoreFrameworkErrors } = await import("petstore-lib/fastify");
    const app = Fastify({ frameworkErrors: petStoreFrameworkErrors(store) });
    await app.register(petStorePlugin, { store });
    origin = await app.listen({ port: 0, host: "127.0.0.1" });
    close = async () => app.close();
  } else if (HOST === "hapi") {
    const Hapi = await import("@hapi/hapi");
    const { petStorePlugin } = await import("petstore-lib/hapi");
    const server = Hapi.server({ port: 0, host: "127.0.0.1" });
    await server.register({ plugin: petStorePlugin, options: { store } });
    await server.start();
    origin = server.info.uri;
    close = async () => server.stop({ timeout: 100 });
  }
}

const inProcess = HOST === "fetch" || HOST === "msw";
const target = {
  basePath: "/v1",
  key: KEY,
  async reset() {
    await store?.close();
    const storage = await openStorage();
    await storage.clear?.();
    store = createPetStore({ storage, auth: [KEY] });
    await mount();
  },
};
// A getter (a spread would read it once): each case's host listens on a port of its own.
if (inProcess) target.fetch = (request) => fetchHandler(request);
else Object.defineProperty(target, "url", { get: () => origin, enumerable: true });

const result = { passed: 0, failed: [] };
const failure = (name, error) => name + ": " + String(error?.message ?? error).split("\\n")[0];
try {
  for (const c of conformanceCases()) {
    try {
      await c.run(target);
      result.passed++;
    } catch (error) {
      result.failed.push(failure(c.name, error));
    }
  }
  // On a driver: the storage cases too (what moving data and the core ask of a storage).
  if (STORAGE !== "memory") {
    result.storagePassed = 0;
    for (const c of storageCases()) {
      try {
        await c.run(async () => {
          const storage = await openStorage();
          await storage.clear?.();
          return storage;
        });
        result.storagePassed++;
      } catch (error) {
        result.failed.push(failure("storage: " + c.name, error));
      }
    }
  }
} finally {
  await close();
  await store?.close();
  // Nothing of this run stays in the shared Redis and Postgres.
  const storage = await openStorage();
  await storage.clear?.();
  await storage.close();
  if (STORAGE === "postgres") {
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({ connectionString: POSTGRES_URL });
    const t = NS;
    await pool.query("DROP TABLE IF EXISTS " + [t + "_values", t + "_index", t + "_idempotency", t + "_rate", t + "_meta"].join(", "));
    await pool.query("DROP SEQUENCE IF EXISTS " + t + "_id_seq");
    await pool.end();
  }
  rmSync(files, { recursive: true, force: true });
}
if (exporter) {
  const spans = exporter.getFinishedSpans();
  result.spans = [...new Set(spans.map((s) => s.name))].sort();
  result.serverSpans = spans.filter((s) => s.kind === 1).length;
}
console.log(JSON.stringify(result));
`;

interface Outcome {
  passed: number;
  storagePassed?: number;
  failed: string[];
  spans?: string[];
  serverSpans?: number;
}

/** Runs the program in `dir` with these settings; resolves its one-line result. */
async function conformance(dir: string, env: Record<string, string>): Promise<Outcome> {
  writeFileSync(join(dir, "conformance.mjs"), PROGRAM);
  const running = startNode(dir, "conformance.mjs", { REDIS_URL, POSTGRES_URL, TMPDIR: tmpdir(), ...env });
  const timer = setTimeout(() => void running.stop(), 120_000);
  const code = await running.exited;
  clearTimeout(timer);
  const out = running.output();
  assert.is(code, 0, `the program ran to its end\n${out}`);
  const outcome = JSON.parse(out.trim().split("\n").pop() ?? "{}") as Outcome;
  assert.equal(outcome.failed, [], "every conformance case passes");
  assert.is(outcome.passed, conformanceCases().length, "every conformance case ran");
  if (env.STORAGE) assert.is(outcome.storagePassed, storageCases().length, "every storage case ran");
  return outcome;
}

/** What the library's spans look like in the project's own SDK, whichever major. */
function assertSpans(outcome: Outcome): void {
  assert.ok((outcome.serverSpans ?? 0) > 0, "SERVER spans of the requests reach the project's exporter");
  for (const name of ["GET /v1/pets", "POST /v1/pets", "GET /v1/pets/{petId}", "petstore.storage listPets"]) {
    assert.ok(outcome.spans?.includes(name), `a span "${name}" (got ${outcome.spans?.join(", ")})`);
  }
}

interface Row {
  /** What the project holds, as the test names it. */
  name: string;
  packages: string[];
  env: Record<string, string>;
  /** The version (or major) the project must end up with at its top level: the one it held. */
  holds?: [pkg: string, major: string];
  spans?: boolean;
}

const OTEL3 = ["api", "sdk-trace", "core", "resources", "context-async-hooks"].map(
  (name) => `@opentelemetry/${name}@${versionOf(`@opentelemetry/${name}`)}`,
);

const ROWS: Row[] = [
  {
    name: "OpenTelemetry API 1.0 (the range's floor) with SDK 1",
    packages: [
      "@opentelemetry/api@1.0.0",
      "@opentelemetry/sdk-trace-node@1.0.1",
      "@opentelemetry/sdk-trace-base@1.0.1",
    ],
    env: { OTEL: "sdk1" },
    holds: ["@opentelemetry/api", "1.0.0"],
    spans: true,
  },
  {
    name: "OpenTelemetry SDK 2 (API 1.9)",
    packages: [
      "@opentelemetry/api@1.9",
      "@opentelemetry/sdk-trace-node@2",
      "@opentelemetry/sdk-trace-base@2",
      "@opentelemetry/core@2",
      "@opentelemetry/resources@2",
    ],
    env: { OTEL: "sdk2" },
    holds: ["@opentelemetry/api", "1.9."],
    spans: true,
  },
  {
    name: "OpenTelemetry SDK 3 (API 1.10)",
    packages: OTEL3,
    env: { OTEL: "sdk3" },
    holds: ["@opentelemetry/api", "1.10."],
    spans: true,
  },
  { name: "prom-client 15", packages: ["prom-client@15"], env: {}, holds: ["prom-client", "15."] },
  { name: "swagger-ui-dist 4", packages: ["swagger-ui-dist@4"], env: {}, holds: ["swagger-ui-dist", "4."] },
  {
    name: "Express 4",
    packages: [`express@${versionOf("express4")}`],
    env: { HOST: "express" },
    holds: ["express", "4."],
  },
  {
    name: "Express 5",
    packages: [`express@${versionOf("express")}`],
    env: { HOST: "express" },
    holds: ["express", "5."],
  },
  {
    name: "Fastify 5",
    packages: [`fastify@${versionOf("fastify")}`],
    env: { HOST: "fastify" },
    holds: ["fastify", "5."],
  },
  {
    name: "hapi 21",
    packages: [`@hapi/hapi@${versionOf("@hapi/hapi")}`],
    env: { HOST: "hapi" },
    holds: ["@hapi/hapi", "21."],
  },
  { name: "msw 2", packages: [`msw@${versionOf("msw")}`], env: { HOST: "msw" }, holds: ["msw", "2."] },
  {
    name: "@keyv/redis 5",
    packages: [`@keyv/redis@${versionOf("@keyv/redis")}`],
    env: { STORAGE: "redis" },
    holds: ["@keyv/redis", "5."],
  },
  { name: "@keyv/sqlite 3", packages: ["@keyv/sqlite@3"], env: { STORAGE: "sqlite" }, holds: ["@keyv/sqlite", "3."] },
  {
    name: "@keyv/sqlite 4",
    packages: [`@keyv/sqlite@${versionOf("@keyv/sqlite")}`],
    env: { STORAGE: "sqlite" },
    holds: ["@keyv/sqlite", "4."],
  },
  {
    name: "@keyv/postgres 2",
    packages: [`@keyv/postgres@${versionOf("@keyv/postgres")}`],
    env: { STORAGE: "postgres" },
    holds: ["@keyv/postgres", "2."],
  },
];

for (const row of ROWS) {
  test(`matrix: a project that holds ${row.name} installs the library (no ERESOLVE) and a store passes the conformance cases there${row.spans ? ", its spans in the project's SDK" : ""}`, async () => {
    const dir = project(row.packages);
    if (row.holds) {
      const [pkg, prefix] = row.holds;
      assert.ok(installed(dir, pkg).startsWith(prefix), `${pkg} ${installed(dir, pkg)}: the project's own, kept`);
    }
    const outcome = await conformance(dir, row.env);
    if (row.spans) assertSpans(outcome);
    rmSync(dir, { recursive: true, force: true });
  });
}

/** A tiny OTLP receiver: the paths of the POSTs it got. */
function otlpReceiver(): Promise<{ server: Server; url: string; posts: string[] }> {
  const posts: string[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    request.resume();
    request.on("end", () => {
      if (request.method === "POST") posts.push(request.url ?? "");
      response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({ server, url: `http://127.0.0.1:${port}`, posts });
    }),
  );
}

/**
 * Starts petstore-server in `dir` on `storage` with metrics and OTLP export on, and checks a create,
 * a page, readiness, `/docs`, the Prometheus text and a POST of spans to the receiver.
 */
async function checkServer(dir: string, storage: string, receiver: { url: string; posts: string[] }): Promise<void> {
  const running = startNode(dir, "node_modules/petstore-server/bin/petstore.js", {
    PORT: "0",
    PETSTORE_METRICS_PORT: "0",
    PETSTORE_API_KEYS: "matrix-key",
    PETSTORE_STORAGE: storage,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: "50",
  });
  try {
    const deadline = Date.now() + 20_000;
    while (!/listening on http:\/\/\S+/.test(running.output()) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const line = running.output();
    const base = /listening on (http:\/\/\S+)/.exec(line)?.[1];
    const metrics = /metrics: (http:\/\/\S+?)[;)]/.exec(line)?.[1];
    assert.ok(base && metrics, `the start-up line names the API and the metrics\n${line}`);
    const auth = { authorization: "Bearer matrix-key" };
    const created = await whenUp(
      `${base}/pets`,
      {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: '{"name":"Rex","categoryId":1}',
      },
      running,
    );
    assert.is(created.status, 201, `${storage}: a create is stored\n${running.output()}`);
    const listed = await fetch(`${base}/pets`, { headers: auth });
    assert.is(listed.status, 200);
    assert.is(((await listed.json()) as unknown[]).length, 1, `${storage}: the pet is listed`);
    const origin = new URL(base).origin;
    assert.is((await fetch(`${origin}/readyz`)).status, 200, `${storage}: ready`);
    const docs = await fetch(`${origin}/docs`);
    assert.is(docs.status, 200, "/docs");
    assert.match(docs.headers.get("content-type") ?? "", /^text\/html/);
    assert.match(await docs.text(), /swagger-ui/i, "the page loads swagger-ui-dist's files");
    const text = await (await fetch(metrics)).text();
    assert.match(text, /^# TYPE http_server_request_duration_seconds histogram$/m, "Prometheus text");
    assert.match(text, /^process_cpu_seconds_total /m, "with the process's default metrics");
    const until = Date.now() + 10_000;
    while (!receiver.posts.includes("/v1/traces") && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(receiver.posts.includes("/v1/traces"), `OTLP spans were POSTed to /v1/traces\n${running.output()}`);
    receiver.posts.length = 0;
  } finally {
    await running.stop();
  }
}

test("matrix: petstore-server from its tarball in an empty project: metrics, /docs, OTLP export and every storage backend, nothing more to install", async () => {
  const dir = project([], { server: true });
  const receiver = await otlpReceiver();
  const ns = `petstore_matrix_server_${process.pid}`;
  try {
    for (const storage of [
      `sqlite:${join(dir, "pets.db")}`,
      `${REDIS_URL}?namespace=${ns}`,
      `${POSTGRES_URL}?namespace=${ns}`,
    ]) {
      await checkServer(dir, storage, receiver);
    }
  } finally {
    receiver.server.close();
    await conformanceCleanup(dir, ns);
    rmSync(dir, { recursive: true, force: true });
  }
});

test("matrix: petstore-server in a project that holds prom-client 14 (no ERESOLVE) serves its metrics with that prom-client", async () => {
  const dir = project(["prom-client@14"], { server: true });
  assert.ok(installed(dir, "prom-client").startsWith("14."), "the project's prom-client 14, kept");
  assert.not.ok(
    existsSync(join(dir, "node_modules/petstore-server/node_modules/prom-client")),
    "petstore-server uses the project's prom-client 14 (no copy of 15 of its own)",
  );
  const receiver = await otlpReceiver();
  try {
    await checkServer(dir, `sqlite:${join(dir, "pets.db")}`, receiver);
  } finally {
    receiver.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Removes what the server tests wrote in Redis and Postgres (its namespace only), with the project's drivers. */
async function conformanceCleanup(dir: string, ns: string): Promise<void> {
  writeFileSync(
    join(dir, "cleanup.mjs"),
    `import { redisStorage, postgresStorage } from "petstore-lib/storage";
for (const open of [() => redisStorage({ url: process.env.REDIS_URL, namespace: "${ns}" }), () => postgresStorage({ url: process.env.POSTGRES_URL, table: "${ns}" })]) {
  const storage = await open();
  await storage.clear();
  await storage.close();
}
const { default: pg } = await import("pg");
const pool = new pg.Pool({ connectionString: process.env.POSTGRES_URL });
await pool.query("DROP TABLE IF EXISTS ${["values", "index", "idempotency", "rate", "meta"].map((t) => `${ns}_${t}`).join(", ")}");
await pool.query("DROP SEQUENCE IF EXISTS ${ns}_id_seq");
await pool.end();
`,
  );
  const running = startNode(dir, "cleanup.mjs", { REDIS_URL, POSTGRES_URL });
  await running.exited;
}

test.run();
