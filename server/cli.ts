/**
 * The `petstore` command (`npm start`, `npx petstore`): reads the configuration, starts one server
 * or the workers of a cluster (PETSTORE_WORKERS) and the metrics server (PETSTORE_METRICS_PORT),
 * prints the start-up line, and stops gracefully on SIGTERM/SIGINT, however many copies of the
 * signal arrive (see countStops). A start that cannot work is one line on stderr and exit code 2.
 */
import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { type ClusterOptions, inWorker, startCluster } from "./cluster.ts";
import type { LoadedConfig } from "./config.ts";
import { loadConfig, USAGE } from "./config.ts";
import { DOCS_PACKAGE, docsAvailable } from "./docs-files.ts";
import { runKeys } from "./keys/cli.ts";
import type { Logger } from "./logger.ts";
import { createLogger, flushLogs } from "./logger.ts";
import { createMetrics, loadPromClient, type MetricsServer, serveMetrics } from "./metrics.ts";
import { startServer, storageKind } from "./start.ts";
import type { RunningTracing, TracingConfig } from "./tracing.ts";
import { checkTracingPackages, startTracing, tracingConfig } from "./tracing.ts";
import { runTransfer, TRANSFER_COMMANDS, type TransferCommand } from "./transfer/cli.ts";

/** The package's version, from its own package.json (the package imports itself by name). */
function packageVersion(): string {
  return (createRequire(import.meta.url)("petstore-server/package.json") as { version: string }).version;
}

/**
 * A request to paste into a terminal: with the generated key; a key from PETSTORE_API_KEYS is never printed.
 * @example tryIt("http://127.0.0.1:8080/v1", "k3y") // 'Try it: curl -H "Authorization: Bearer k3y" http://127.0.0.1:8080/v1/pets'
 */
function tryIt(url: string, generatedKey: string | undefined): string {
  return `Try it: curl -H "Authorization: Bearer ${generatedKey ?? "<a key of PETSTORE_API_KEYS>"}" ${url}/pets`;
}

/** Where spans go, for the start-up line. */
function tracesWhere(traces: TracingConfig | undefined): string {
  if (traces === undefined) return "";
  if (traces.exporter === "console") return "; traces: printed on stdout";
  return `; traces: OTLP ${traces.protocol} to ${traces.endpoint}`;
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

/** What `startAll` started. `close(signal)` stops it all gracefully (the signal for the workers' logs). */
interface Started {
  url: string;
  workers: number;
  metricsUrl: string | undefined;
  /** What the OTEL_* variables asked for, when traces are exported. */
  traces: TracingConfig | undefined;
  close(signal?: NodeJS.Signals): Promise<void>;
  /** Reads the keys file again, in every worker (SIGHUP). */
  reloadKeys(): void;
}

/**
 * Starts what `main` runs: one server, or (PETSTORE_WORKERS > 1) the workers of a cluster, and the
 * metrics server when PETSTORE_METRICS_PORT is set, and the export of traces when an OTLP endpoint is
 * (in each process that serves). In a worker: one server, its metrics answered to the primary's
 * aggregator instead of served. `onWorkerSignal`: a signal a worker passed on.
 */
async function startAll(
  loaded: LoadedConfig,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  onWorkerSignal: NonNullable<ClusterOptions["onSignal"]>,
): Promise<Started> {
  const { config } = loaded;
  const worker = inWorker.active;
  const workers = worker ? 1 : (config.workers ?? 1);
  const prom = config.metricsPort === undefined ? undefined : await loadPromClient();
  const tracing = tracingConfig(env);
  let traces: RunningTracing | undefined;
  let url: string;
  let stopServing: (signal?: NodeJS.Signals) => Promise<void>;
  let reloadKeys: () => void;
  let render: (() => Promise<string>) | undefined;
  let contentType = "";
  if (workers > 1) {
    // The workers read the same environment and flags; a key generated here is handed to them.
    const workerEnv: Record<string, string> = loaded.generatedKey
      ? { PETSTORE_API_KEYS: config.apiKeys.join(",") }
      : {};
    if (tracing !== undefined) await checkTracingPackages(tracing); // each worker exports its own spans
    const running = await startCluster({
      count: workers,
      logger,
      env: workerEnv,
      stopTimeoutMs: 15_000,
      onSignal: onWorkerSignal,
    });
    url = running.url;
    stopServing = running.close;
    reloadKeys = running.reload;
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
    traces = tracing === undefined ? undefined : await startTracing(tracing, logger);
    const server = await startServer(config, { logger, ...(metrics ? { observe: metrics.observe } : {}) }).catch(
      async (error: unknown) => {
        await traces?.shutdown();
        throw error;
      },
    );
    url = server.url;
    stopServing = server.close;
    reloadKeys = server.reloadKeys;
  }
  let metricsServer: MetricsServer | undefined;
  if (render !== undefined && config.metricsPort !== undefined) {
    try {
      metricsServer = await serveMetrics(config.host, config.metricsPort, render, contentType);
    } catch (error) {
      await stopServing();
      await traces?.shutdown();
      throw error;
    }
  }
  return {
    url,
    workers,
    metricsUrl: metricsServer?.url,
    traces: tracing,
    reloadKeys,
    close(signal?: NodeJS.Signals): Promise<void> {
      const stopping = stopServing(signal); // called at once: the port stops accepting before anything else
      // The spans of the last requests are exported once the server stopped answering.
      return stopping.then(() => metricsServer?.close()).then(() => traces?.shutdown());
    },
  };
}

/** Signals within this time of the first are the same request to stop (ms); a later one exits at once. */
export const SAME_STOP_MS = 1000;

/** How a request to stop counts: the first stops, one within `windowMs` of it is the same, a later one exits. */
export type StopCount = "stop" | "same" | "exit";

/**
 * Counts the requests to stop by when they arrived (epoch ms): a terminal's Ctrl-C reaches every
 * process of the group and npm passes it on again, and a service manager signals every process of
 * the service, so the copies of one request come within a moment; a deliberate second one later.
 */
export function countStops(windowMs = SAME_STOP_MS): (at: number) => StopCount {
  let first: number | undefined;
  return (at) => {
    if (first === undefined) {
      first = at;
      return "stop";
    }
    return at - first < windowMs ? "same" : "exit";
  };
}

/** Stops `server` gracefully, logs it, and exits 0. `viaWorker`: the worker that got the signal. */
async function stopAndExit(
  server: Started,
  signal: NodeJS.Signals,
  logger: Logger,
  viaWorker?: number,
): Promise<never> {
  const closing = server.close(signal); // stops accepting at once, before anything else happens
  logger.info({ signal, ...(viaWorker === undefined ? {} : { viaWorker }) }, "shutting down");
  logger.flush(); // operators (and tests) see it now, not at the next 200 ms tick
  try {
    await closing;
    logger.info("stopped");
  } catch (error) {
    logger.error({ err: error }, "error while stopping");
  }
  await flushLogs(logger);
  process.exit(0);
}

/** Runs the server as `npm start` / the `petstore` command does, until SIGTERM or SIGINT. */
export async function main(argv: readonly string[] = process.argv.slice(2), env = process.env): Promise<void> {
  const [command, ...rest] = argv;
  if (command === "keys") {
    process.exitCode = await runKeys(rest, env);
    return;
  }
  if (TRANSFER_COMMANDS.includes(command as TransferCommand)) {
    process.exitCode = await runTransfer(command as TransferCommand, rest, env);
    return;
  }
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
  if (loaded.version) {
    process.stdout.write(`${packageVersion()}\n`);
    return;
  }
  const { config } = loaded;
  const worker = inWorker.active;
  const logger = createLogger(config.logLevel);
  // Signals are handled from the start: one arriving while the storage opens stops the server
  // as soon as it is up, instead of killing the process half-way.
  let server: Started | undefined;
  let asked: { signal: NodeJS.Signals; viaWorker?: number } | undefined; // the stop, once asked for
  let exiting = false;
  const count = countStops();
  /** A request to stop: a signal here, or (in the primary) one a worker got and passed on. */
  const request = (signal: NodeJS.Signals, at = Date.now(), from?: number) => {
    const counted = count(at);
    if (counted === "same") {
      logger.debug({ signal, ...(from === undefined ? {} : { viaWorker: from }) }, "stop already under way");
    } else if (counted === "exit") {
      if (exiting) return;
      exiting = true;
      // Workers exit as soon as the primary's channel closes (node:cluster): none is left behind.
      logger.warn({ signal }, "second signal: exiting now");
      void flushLogs(logger, 500).then(() => process.exit(1));
    } else if (asked === undefined) {
      asked = { signal, ...(from === undefined ? {} : { viaWorker: from }) };
      if (server !== undefined) void stopAndExit(server, signal, logger, from);
    }
  };
  // A worker leaves the decision to the primary, which stops every worker; without a primary to
  // tell (its channel closed), it stops by itself.
  const onSignal = (signal: NodeJS.Signals) => (worker && inWorker.passOn(signal) ? undefined : request(signal));
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  // SIGHUP reads the keys file again (in the primary: in every worker), never stops the server.
  process.on("SIGHUP", () => server?.reloadKeys());
  if (worker) inWorker.onReload(() => server?.reloadKeys());
  if (worker)
    inWorker.onStop((signal) => {
      if (asked !== undefined) return;
      asked = { signal };
      if (server !== undefined) void stopAndExit(server, signal, logger);
    });

  let started: Started;
  try {
    started = await startAll(loaded, env, logger, request);
  } catch (error) {
    if (worker) await dieInWorker(error);
    die(error);
  }
  server = started;
  if (asked !== undefined) return void stopAndExit(started, asked.signal, logger, asked.viaWorker);
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
  const rate = config.rateLimit;
  const limits = rate === undefined ? "" : `; rate limit: ${rate.limit} per key every ${rate.windowSeconds} s`;
  const traces = tracesWhere(started.traces);
  process.stdout.write(
    `Pet Store API listening on ${started.url} (storage: ${storageKind(config.storage)}${workers}${metrics}${limits}${traces}; GET /healthz, /readyz)\n` +
      `${tryIt(started.url, loaded.generatedKey ? config.apiKeys[0] : undefined)}\n`,
  );
  // The docs page's optional package: say at once why /docs would answer 503.
  if (!docsAvailable()) {
    process.stdout.write(
      `API reference page off: GET /docs answers 503 until the optional package ${DOCS_PACKAGE} is installed (npm install ${DOCS_PACKAGE})\n`,
    );
  }
}

/** True when this file was started directly (`tsx server/cli.ts`, `node server/dist/cli.js`). */
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
