/**
 * The standalone server: the Node adapter on its own `http` server, configured from the
 * environment (see ./config.ts), with request logs, /healthz and /readyz, time-outs for slow
 * clients, and a graceful stop on SIGTERM/SIGINT. `npm start` runs `main()`; tests and
 * programs can call `startServer(config)` in-process.
 */
import { realpathSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { createServer, type ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import type { Awaitable, Observer, PetStore, PetStoreRules } from "../lib/index.ts";
import {
  createPetStore,
  errorResponse,
  JSON_TYPE,
  openStorage,
  PetStoreError,
  requestIdOf,
  responseHeaders,
} from "../lib/index.ts";
import { cannotRespond } from "./body.ts";
import { inWorker, startCluster } from "./cluster.ts";
import type { ServerConfig } from "./config.ts";
import { ConfigError, loadConfig, USAGE } from "./config.ts";
import { DOCS_PACKAGE, docsAvailable, docsRoute } from "./docs.ts";
import type { Logger } from "./logger.ts";
import { createLogger, flushLogs, requestLogger } from "./logger.ts";
import { createMetrics, loadPromClient, type MetricsServer, serveMetrics } from "./metrics.ts";
import { createNodeHandler, type OnResponse } from "./node-http.ts";

export type { LoadedConfig, ServerConfig } from "./config.ts";

import type { LoadedConfig } from "./config.ts";

export { ConfigError, loadConfig } from "./config.ts";

export interface RunningServer {
  /** e.g. "http://127.0.0.1:8080/v1" (the real port when 0 was asked for). */
  url: string;
  port: number;
  store: PetStore;
  /** Stops accepting, lets in-flight requests finish (within the grace), closes the storage. Idempotent. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Where request logs go (default: JSON lines on stdout at `config.logLevel`). */
  logger?: Logger;
  /** Business rules of a program that starts the server itself (`createPetStore({ rules })`; none from the environment). */
  rules?: PetStoreRules;
  /** Passed to `createPetStore({ observe })`: the figures of every request and storage call (metrics). */
  observe?: Observer;
}

/**
 * What one of the server's own routes serves: a status, a body (bytes for the docs' assets) and
 * the headers beyond those every response carries (see `responseHeaders` in the core).
 */
interface RouteContent {
  status: number;
  contentType: string;
  body: string | Uint8Array;
  headers?: Record<string, string>;
}

type ServerRoute = (context: { store: PetStore; draining: boolean }) => Awaitable<RouteContent>;

const jsonResponse = (status: number, value: unknown): RouteContent => ({
  status,
  contentType: JSON_TYPE,
  body: JSON.stringify(value),
});

// ---------------------------------------------------------------------------------------------
// THE SERVER'S OWN ROUTES: outside the base path, responded without a key (GET and HEAD only).
// Add new ones here, e.g. `case "/docs": return docsRoute;` from ./docs.ts.
// ---------------------------------------------------------------------------------------------
function serverRoute(path: string): ServerRoute | undefined {
  switch (path) {
    case "/healthz":
      return () => jsonResponse(200, { status: "ok" });
    case "/readyz":
      return async ({ store, draining }) =>
        !draining && (await store.ready())
          ? jsonResponse(200, { status: "ready" })
          : jsonResponse(503, { status: "unavailable" });
    default:
      return docsRoute(path); // GET /docs: the API reference page, and its assets under /docs/
  }
}

/** The response of one of the server's own routes, its headers built as the API's are. */
async function serverResponse(
  route: ServerRoute,
  context: { store: PetStore; draining: boolean },
  method: string,
  requestId: string,
): Promise<{ status: number; headers: Record<string, string>; body: string | Uint8Array }> {
  const head = method === "HEAD";
  if (method !== "GET" && !head) {
    return errorResponse(new PetStoreError("method_not_allowed"), false, requestId, { allow: "GET, HEAD" });
  }
  let content: RouteContent;
  try {
    content = await route(context);
  } catch {
    return errorResponse(new PetStoreError("internal_error"), head, requestId);
  }
  const bytes = typeof content.body === "string" ? Buffer.byteLength(content.body) : content.body.byteLength;
  const headers = responseHeaders(content.contentType, requestId, bytes, content.headers);
  return { status: content.status, headers, body: head ? "" : content.body };
}

async function serveOwnRoute(
  route: ServerRoute,
  context: { store: PetStore; draining: boolean },
  req: IncomingMessage,
  res: ServerResponse,
  onResponse: OnResponse,
) {
  const started = performance.now();
  const requestId = requestIdOf(req.headers["x-request-id"]);
  const response = await serverResponse(route, context, req.method ?? "GET", requestId);
  const gone = cannotRespond(req, res);
  onResponse(req, res, { status: response.status, requestId, aborted: gone, ms: performance.now() - started });
  if (gone) return;
  res.writeHead(response.status, response.headers);
  res.end(response.body);
}

/** The request's path, without the query string. */
function pathOf(req: IncomingMessage): string {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** The scheme of a storage spec, for messages that must not show a password. */
const storageKind = (spec: string) => /^([a-z][a-z0-9+.-]*):/i.exec(spec)?.[1] ?? spec;

/**
 * Opens the storage, checks it answers, and listens. Rejects with a one-line error (ConfigError or
 * StorageConfigError) when the configuration cannot work.
 *
 * @example const server = await startServer({ ...loadConfig(process.env).config, port: 0 }); await server.close();
 */
export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const storage = await openStorage(config.storage);
  let store: PetStore;
  try {
    store = createPetStore({
      storage,
      auth: config.apiKeys,
      basePath: config.basePath,
      idempotencyTtlMs: (config.idempotencyTtlSeconds ?? 86_400) * 1000,
      onError: (error) => logger.error({ err: error }, "unexpected error"),
      ...(options.rules === undefined ? {} : { rules: options.rules }),
      ...(options.observe === undefined ? {} : { observe: options.observe }),
    });
  } catch (error) {
    await storage.close();
    throw new ConfigError((error as Error).message);
  }
  if (!(await store.ready())) {
    await store.close();
    throw new ConfigError(`storage ${storageKind(config.storage)} is unreachable`);
  }

  const log = requestLogger(logger);
  let inFlight = 0;
  let draining = false;

  /** Logs one responded (or abandoned) request; while stopping, asks for its connection to close. */
  function responded(
    req: IncomingMessage,
    res: ServerResponse,
    response: { status: number; requestId: string; aborted: boolean; ms: number },
  ) {
    inFlight--;
    if (draining) {
      res.shouldKeepAlive = false;
      setImmediate(() => server.closeIdleConnections());
    }
    log(req.method ?? "", pathOf(req), response.status, response.ms, response.requestId, response.aborted);
  }

  const api = createNodeHandler(store, { onResponse: responded });
  const headersTimeout = config.headersTimeoutMs ?? 10_000;
  const server = createServer(
    {
      headersTimeout,
      requestTimeout: Math.max(config.requestTimeoutMs ?? 30_000, headersTimeout),
      connectionsCheckingInterval: Math.min(1000, headersTimeout),
    },
    (req, res) => {
      inFlight++;
      if (draining) res.shouldKeepAlive = false;
      const own = serverRoute(pathOf(req));
      if (own) void serveOwnRoute(own, { store, draining }, req, res, responded);
      else api(req, res);
    },
  );
  server.keepAliveTimeout = config.keepAliveTimeoutMs ?? 5000;

  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, config.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    await store.close();
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ConfigError(`cannot listen on ${config.host}:${config.port}: ${code}`);
  }
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : config.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= (async () => {
      draining = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => {
        logger.warn({ inFlight }, "grace period over: closing the remaining connections");
        server.closeAllConnections();
      }, config.shutdownGraceMs ?? 10_000);
      await stopped;
      clearTimeout(grace);
      await store.close();
      if (options.logger === undefined) await flushLogs(logger); // a logger of our own: finish it
    })();
    return closing;
  }

  return { url: `http://${host}:${port}${store.basePath}`, port, store, close };
}

/** The one line and the exit code of a start that failed: 2 for a configuration that cannot work, else 1. */
function failure(error: unknown): { line: string; code: number } {
  const name = (error as Error)?.name;
  const known = name === "ConfigError" || name === "StorageConfigError";
  const message = (error instanceof Error ? error.message : String(error)).split("\n")[0];
  return { line: `${known ? "" : "cannot start: "}${message}`, code: known ? 2 : 1 };
}

/** Prints one line on stderr and exits (see `failure`). */
function die(error: unknown): never {
  const { line, code } = failure(error);
  process.stderr.write(`petstore: ${line}\n`);
  process.exit(code);
}

/** In a worker: tells the primary why it cannot start (the primary prints one line for all) and exits. */
async function dieInWorker(error: unknown): Promise<never> {
  const { line, code } = failure(error);
  await inWorker.tell({ type: "petstore:failed", message: line.replace(/^cannot start: /, ""), code });
  process.exit(code);
}

/**
 * Starts what `main` runs: one server, or (PETSTORE_WORKERS > 1) the workers of a cluster, and the
 * metrics server when PETSTORE_METRICS_PORT is set. In a worker: one server, its metrics answered
 * to the primary's aggregator instead of served.
 */
async function startAll(loaded: LoadedConfig, logger: Logger) {
  const { config } = loaded;
  const worker = inWorker.active;
  const workers = worker ? 1 : (config.workers ?? 1);
  const prom = config.metricsPort === undefined ? undefined : await loadPromClient();
  let url: string;
  let stopServing: () => Promise<void>;
  let render: (() => Promise<string>) | undefined;
  let contentType = "";
  if (workers > 1) {
    // The workers read the same environment and flags; a key generated here is handed to them.
    const env: Record<string, string> = loaded.generatedKey ? { PETSTORE_API_KEYS: config.apiKeys.join(",") } : {};
    const running = await startCluster({ count: workers, logger, env, stopTimeoutMs: 15_000 });
    url = running.url;
    stopServing = running.close;
    if (prom !== undefined) {
      const aggregator = new prom.AggregatorRegistry();
      render = () => aggregator.clusterMetrics();
      contentType = aggregator.contentType;
    }
  } else {
    const metrics = prom === undefined ? undefined : createMetrics(prom);
    if (prom !== undefined && metrics !== undefined) {
      if (worker) {
        prom.AggregatorRegistry.setRegistries(metrics.registry);
        new prom.AggregatorRegistry(); // answers the primary's requests for this worker's figures
      } else {
        render = () => metrics.registry.metrics();
        contentType = metrics.registry.contentType;
      }
    }
    const server = await startServer(config, { logger, ...(metrics ? { observe: metrics.observe } : {}) });
    url = server.url;
    stopServing = server.close;
  }
  let metricsServer: MetricsServer | undefined;
  if (render !== undefined && config.metricsPort !== undefined) {
    try {
      metricsServer = await serveMetrics(config.host, config.metricsPort, render, contentType);
    } catch (error) {
      await stopServing();
      throw error;
    }
  }
  return {
    url,
    workers,
    metricsUrl: metricsServer?.url,
    close(): Promise<void> {
      const stopping = stopServing(); // called at once: the port stops accepting before anything else
      return stopping.then(() => metricsServer?.close());
    },
  };
}

/** Runs the server as `npm start` / the `petstore` command does, until SIGTERM or SIGINT. */
export async function main(argv: readonly string[] = process.argv.slice(2), env = process.env): Promise<void> {
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig(env, argv);
  } catch (error) {
    die(error);
  }
  if (loaded.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const { config } = loaded;
  const worker = inWorker.active;
  const logger = createLogger(config.logLevel);
  // Signals are handled from the start: one arriving while the storage opens stops the server
  // as soon as it is up, instead of killing the process half-way.
  let server: { close(): Promise<void> } | undefined;
  let signalled: NodeJS.Signals | undefined;
  const stop = async (signal: NodeJS.Signals) => {
    if (signalled !== undefined) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(1); // pino writes what is pending on exit
    }
    signalled = signal;
    if (server === undefined) return; // still starting: see below
    const closing = server.close(); // stops accepting at once, before anything else happens
    logger.info({ signal }, "shutting down");
    logger.flush(); // operators (and tests) see it now, not at the next 200 ms tick
    try {
      await closing;
      logger.info("stopped");
    } catch (error) {
      logger.error({ err: error }, "error while stopping");
    }
    await flushLogs(logger);
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  // A worker is stopped by its primary (once; a SIGINT from a terminal may have come first).
  if (worker) inWorker.onStop(() => signalled === undefined && void stop("SIGTERM"));

  let started: Awaited<ReturnType<typeof startAll>>;
  try {
    started = await startAll(loaded, logger);
  } catch (error) {
    if (worker) await dieInWorker(error);
    die(error);
  }
  server = started;
  if (signalled !== undefined) {
    const signal = signalled;
    signalled = undefined;
    return stop(signal);
  }
  if (worker) {
    await inWorker.tell({ type: "petstore:listening", url: started.url }); // the primary prints the line
    return;
  }
  if (loaded.generatedKey) {
    process.stdout.write(
      `No PETSTORE_API_KEYS set: generated API key for this run: ${config.apiKeys[0]}\n` +
        `  (send it as "Authorization: Bearer <key>"; set PETSTORE_API_KEYS=key1,key2 to choose your own)\n`,
    );
  }
  const workers = started.workers > 1 ? `; ${started.workers} workers` : "";
  const metrics = started.metricsUrl === undefined ? "" : `; metrics: ${started.metricsUrl}`;
  process.stdout.write(
    `Pet Store API listening on ${started.url} (storage: ${storageKind(config.storage)}${workers}${metrics}; GET /healthz, /readyz)\n`,
  );
  // The docs page's optional package (issue 20): say at once why /docs would answer 503.
  if (!docsAvailable()) {
    process.stdout.write(
      `API reference page off: GET /docs answers 503 until the optional package ${DOCS_PACKAGE} is installed (npm install ${DOCS_PACKAGE})\n`,
    );
  }
}

/** True when this file was started directly (`tsx adapters/server.ts`, `node dist/adapters/server.js`). */
function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) void main();
