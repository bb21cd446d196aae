/**
 * The `petstore` command (`npm start`, `npx petstore`): reads the configuration, starts one server
 * or the workers of a cluster (PETSTORE_WORKERS) and the metrics server (PETSTORE_METRICS_PORT),
 * prints the start-up line, and stops gracefully on SIGTERM/SIGINT. A start that cannot work is
 * one line on stderr and exit code 2.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { inWorker, startCluster } from "./cluster.ts";
import type { LoadedConfig } from "./config.ts";
import { loadConfig, USAGE } from "./config.ts";
import { DOCS_PACKAGE, docsAvailable } from "./docs-files.ts";
import type { Logger } from "./logger.ts";
import { createLogger, flushLogs } from "./logger.ts";
import { createMetrics, loadPromClient, type MetricsServer, serveMetrics } from "./metrics.ts";
import { startServer, storageKind } from "./start.ts";

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
  // The docs page's optional package: say at once why /docs would answer 503.
  if (!docsAvailable()) {
    process.stdout.write(
      `API reference page off: GET /docs answers 503 until the optional package ${DOCS_PACKAGE} is installed (npm install ${DOCS_PACKAGE})\n`,
    );
  }
}

/** True when this file was started directly (`tsx server/cli.ts`, `node dist/server/cli.js`). */
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
