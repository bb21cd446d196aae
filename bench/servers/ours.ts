/**
 * Our server under test, in a child process: argv[2] is "standalone" (server/index.ts's
 * startServer, memory storage or the storage spec BENCH_STORAGE, request logs on (BENCH_LOG_LEVEL, default info), as `npm start`
 * runs it; stdout is discarded by the parent), "standalone-metrics" (the same with the metrics of
 * PETSTORE_METRICS_PORT fed), "standalone-cors" (the same allowing BENCH_CORS_ORIGIN's pages), "standalone-limited"
 * (the same with rate limits on: R1, R2), "standalone-no-otel" (the same where `@opentelemetry/api` cannot be
 * found: O3's baseline), "standalone-traced" (the same with a tracer provider sampling every request: O4),
 * "hapi" (the hapi plugin on a hapi server) or "fastify" (the
 * Fastify plugin on a Fastify server). The store gets BENCH_PETS pets, then
 * the child tells its parent the port and serves until told to stop.
 */
import { createServer } from "node:http";
import Hapi from "@hapi/hapi";
import Fastify from "fastify";
import type { PetStore } from "../../lib/index.ts";
import { exitWithParent, tellParent } from "../child.ts";
import { benchPet } from "../fill.ts";

// Our code as users run it: the compiled dist/ (bench/run.ts builds it first), not through tsx,
// whose transform names every function it creates at run time.
const dist = new URL("../../dist/", import.meta.url).href;
const server = new URL("../../server/dist/", import.meta.url).href;
const { petStorePlugin } = (await import(`${dist}adapters/hapi.js`)) as typeof import("../../adapters/hapi.ts");
const { petStorePlugin: fastifyPlugin } = (await import(
  `${dist}adapters/fastify.js`
)) as typeof import("../../adapters/fastify.ts");
const { createNodeHandler } = (await import(
  `${dist}adapters/node-http.js`
)) as typeof import("../../adapters/node-http.ts");
const { startServer } = (await import(`${server}index.js`)) as typeof import("../../server/index.ts");
const { createPetStore } = (await import(`${dist}lib/index.js`)) as typeof import("../../lib/index.ts");
const { createMetrics, loadPromClient } = (await import(
  `${server}metrics.js`
)) as typeof import("../../server/metrics.ts");

const mode = process.argv[2];
const key = process.env.BENCH_KEY ?? "bench-key";
const pets = Number(process.env.BENCH_PETS ?? 0);
const logLevel = (process.env.BENCH_LOG_LEVEL ?? "info") as "info";

async function fillStore(store: PetStore): Promise<void> {
  for (let id = 1; id <= pets; id++) {
    const { name, categoryId, status } = benchPet(id);
    await store.createPet({ name, categoryId, status });
  }
}

/**
 * O3's baseline: `@opentelemetry/api` not to be found, as in an application that did not install it
 * (the store looks for it with require when it is made). Node 22.15+ (`registerHooks`).
 */
async function hideOtelApi(): Promise<void> {
  const { registerHooks } = (await import("node:module")) as unknown as {
    registerHooks(hooks: {
      resolve(specifier: string, context: unknown, next: (s: string, c: unknown) => unknown): unknown;
    }): void;
  };
  registerHooks({
    resolve(specifier, context, next) {
      if (specifier === "@opentelemetry/api") {
        throw Object.assign(new Error(`Cannot find module '${specifier}'`), { code: "MODULE_NOT_FOUND" });
      }
      return next(specifier, context);
    },
  });
}

/** O4: a provider sampling every request, spans batched and handed to an exporter that drops them, registered as an SDK does. */
async function registerTracing(): Promise<void> {
  const api = await import("@opentelemetry/api");
  const { TracerProvider, BatchSpanProcessor, AlwaysOnSampler } = await import("@opentelemetry/sdk-trace");
  const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
  const { W3CTraceContextPropagator } = await import("@opentelemetry/core");
  const exporter = {
    export: (_spans: unknown, done: (result: { code: 0 }) => void) => done({ code: 0 }),
    shutdown: async () => {},
  };
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(
    new TracerProvider({ sampler: new AlwaysOnSampler(), spanProcessors: [new BatchSpanProcessor({ exporter })] }),
  );
}

if (mode === "standalone-no-otel") await hideOtelApi();
if (mode === "standalone-traced") await registerTracing();

if (
  mode === "standalone" ||
  mode === "standalone-metrics" ||
  mode === "standalone-cors" ||
  mode === "standalone-limited" ||
  mode === "standalone-no-otel" ||
  mode === "standalone-traced"
) {
  // With metrics, as PETSTORE_METRICS_PORT sets them up: the store's observer feeds prom-client.
  const metrics = mode === "standalone-metrics" ? createMetrics(await loadPromClient()) : undefined;
  // BENCH_STORAGE: a storage spec (B1-B4), whose pets the parent has loaded already.
  const storage = process.env.BENCH_STORAGE;
  const server = await startServer(
    {
      port: 0,
      host: "127.0.0.1",
      storage: storage ?? "memory",
      basePath: "/v1",
      logLevel,
      apiKeys: [key],
      ...(mode === "standalone-cors" ? { corsOrigins: [process.env.BENCH_CORS_ORIGIN ?? "https://shop.example"] } : {}),
      // R1, R2: a limit the run never reaches, so that every request is admitted and counted.
      ...(mode === "standalone-limited" ? { rateLimit: { limit: 1_000_000, windowSeconds: 60 } } : {}),
      // --instructions: the slowed server's storage calls get the time they need (bench/http.ts).
      ...(process.env.BENCH_STORAGE_TIMEOUT_MS
        ? { storageTimeoutMs: Number(process.env.BENCH_STORAGE_TIMEOUT_MS) }
        : {}),
    },
    metrics ? { observe: metrics.observe } : {},
  );
  if (storage === undefined) await fillStore(server.store);
  exitWithParent(() => server.close());
  tellParent({ type: "ready", port: server.port });
} else if (mode === "node-http") {
  // Diagnosis only (BENCH_OURS=node-http): the Node adapter on a bare server, without the
  // standalone server's logging and request ids, to tell their cost from the core's.
  const store = createPetStore({ auth: [key] });
  await fillStore(store);
  const server = createServer(createNodeHandler(store));
  server.listen(0, "127.0.0.1", () => {
    exitWithParent(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const address = server.address();
    tellParent({ type: "ready", port: typeof address === "object" && address ? address.port : 0 });
  });
} else if (mode === "hapi") {
  const store = createPetStore({ auth: [key] });
  await fillStore(store);
  const server = Hapi.server({ port: 0, host: "127.0.0.1" });
  await server.register({ plugin: petStorePlugin, options: { store } });
  await server.start();
  exitWithParent(async () => {
    await server.stop({ timeout: 1000 });
    await store.close();
  });
  tellParent({ type: "ready", port: Number(server.info.port) });
} else if (mode === "fastify") {
  const store = createPetStore({ auth: [key] });
  await fillStore(store);
  const app = Fastify();
  await app.register(fastifyPlugin, { store });
  await app.listen({ port: 0, host: "127.0.0.1" });
  exitWithParent(async () => {
    await app.close();
    await store.close();
  });
  tellParent({ type: "ready", port: (app.server.address() as { port: number }).port });
} else {
  throw new Error(`bench/servers/ours.ts: unknown mode ${JSON.stringify(mode)} (standalone, hapi or fastify)`);
}
