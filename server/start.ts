/**
 * `startServer(config)`: the standalone server in this process. The Node adapter on its own
 * `http` server, with request logs, the server's own routes (health, readiness, docs), time-outs
 * for slow clients, and `close()`: stop accepting, let requests in flight finish, close storage.
 */
import type { IncomingMessage } from "node:http";
import { createServer } from "node:http";
import type { PetStore, PetStoreRules, RateLimitOptions } from "petstore-lib";
import { createPetStore, openStorage } from "petstore-lib";
import { isUnderBasePath } from "petstore-lib/adapter";
import type { OnResponse } from "petstore-lib/node-http";
import { answerClientError, createNodeHandler } from "petstore-lib/node-http";
import type { Observer, RateLimitObservation, TracerProviderLike } from "petstore-lib/observe";
import type { ServerAuth } from "./auth.ts";
import { serverAuth } from "./auth.ts";
import type { ServerConfig } from "./config.ts";
import { ConfigError, completeConfig } from "./config.ts";
import { listen, listenProblem } from "./listen.ts";
import { logError } from "./log-error.ts";
import type { Logger } from "./logger.ts";
import { createLogger, flushLogs, requestLogger } from "./logger.ts";
import { routesMayLieUnder, serveRoute, serverRoute } from "./routes.ts";

export interface RunningServer {
  /** e.g. "http://127.0.0.1:8080/v1" (the real port when 0 was asked for). */
  url: string;
  port: number;
  store: PetStore;
  /** Stops accepting, lets in-flight requests finish (within the grace), closes the storage. Idempotent. */
  close(): Promise<void>;
  /** Reads the keys file again (SIGHUP); nothing without one. */
  reloadKeys(): void;
}

export interface StartOptions {
  /** Where request logs go (default: JSON lines on stdout at `config.logLevel`). */
  logger?: Logger;
  /** Business rules of a program that starts the server itself (`createPetStore({ rules })`; none from the environment). */
  rules?: PetStoreRules;
  /** Passed to `createPetStore({ observe })`: the figures of every request and storage call (metrics). */
  observe?: Observer;
  /** Passed to `createPetStore({ tracerProvider })`: where spans go (default: the registered provider). */
  tracerProvider?: TracerProviderLike;
}

/** The request's path, without the query string. */
function pathOf(req: IncomingMessage): string {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** The scheme of a storage spec, for messages that must not show a password. */
export const storageKind = (spec: string) => /^([a-z][a-z0-9+.-]*):/i.exec(spec)?.[1] ?? spec;

/**
 * The store's rate limits, when on, with one warning per caller and window that passed its limit,
 * naming its principal, never its key.
 */
function rateLimits(config: ServerConfig, logger: Logger): { rateLimit?: RateLimitOptions } {
  if (config.rateLimit === undefined) return {};
  const onLimited = ({ first, scope, limit, windowSeconds }: RateLimitObservation) => {
    if (first) {
      logger.warn({ principal: scope, limit, windowSeconds }, "rate limited: a caller passed its limit in this window");
    }
  };
  return { rateLimit: { ...config.rateLimit, onLimited } };
}

/** The store of the server, from its configuration; a configuration that cannot work is a ConfigError. */
async function openStore(
  config: ServerConfig,
  options: StartOptions,
  logger: Logger,
  { auth }: ServerAuth,
): Promise<PetStore> {
  const timeout = config.storageTimeoutMs === undefined ? {} : { operationTimeoutMs: config.storageTimeoutMs };
  const storage = await openStorage(config.storage, timeout);
  let store: PetStore;
  try {
    store = createPetStore({
      storage,
      auth,
      ...timeout,
      basePath: config.basePath,
      idempotencyTtlMs: (config.idempotencyTtlSeconds ?? 86_400) * 1000,
      ...(config.corsOrigins === undefined ? {} : { cors: { origins: config.corsOrigins } }),
      ...(config.cacheControl === undefined ? {} : { cacheControl: config.cacheControl }),
      onError: (error) => logError(logger, error),
      breaker: {
        onChange: ({ state, backend, failures, cause }) =>
          state === "open"
            ? logger.warn(
                { backend, failures, cause },
                "storage breaker open: answering 503 at once until a probe succeeds",
              )
            : logger.info({ backend }, "storage breaker closed: the storage answers again"),
      },
      ...(options.rules === undefined ? {} : { rules: options.rules }),
      ...rateLimits(config, logger),
      ...(options.observe === undefined ? {} : { observe: options.observe }),
      ...(options.tracerProvider === undefined ? {} : { tracerProvider: options.tracerProvider }),
    });
  } catch (error) {
    await storage.close();
    throw new ConfigError((error as Error).message);
  }
  if (!(await store.ready())) {
    await store.close();
    throw new ConfigError(`storage ${storageKind(config.storage)} is unreachable`);
  }
  return store;
}

/**
 * Opens the storage, checks it answers, and listens. A field left out of `config` takes its
 * default (as `loadConfig` gives it); `apiKeys` is required. Rejects with a one-line error
 * (ConfigError or StorageConfigError) when the configuration cannot work.
 *
 * @example const server = await startServer({ ...loadConfig(process.env).config, port: 0 }); await server.close();
 */
export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  const settings = completeConfig(config);
  const logger = options.logger ?? createLogger(settings.logLevel);
  const auth = serverAuth(settings, logger);
  const store = await openStore(settings, options, logger, auth).catch((error: unknown) => {
    auth.close();
    throw error;
  });
  const log = requestLogger(logger);
  let draining = false;
  let inFlight = 0;

  /** Logs one answered (or abandoned) request; while stopping, asks for its connection to close. */
  const responded: OnResponse = (req, res, response) => {
    inFlight--;
    if (draining) {
      res.shouldKeepAlive = false;
      setImmediate(() => server.closeIdleConnections());
    }
    const { status, ms, requestId, aborted, traceId, principal } = response;
    log(req.method ?? "", pathOf(req), status, ms, requestId, aborted, traceId, principal);
  };

  const api = createNodeHandler(store, { onResponse: responded, compression: settings.compression !== false });
  // Under a base path none of the server's routes can lie in, the API is asked first.
  const basePath = store.basePath;
  const apiFirst = !routesMayLieUnder(basePath);
  const headersTimeout = settings.headersTimeoutMs ?? 10_000;
  const server = createServer(
    {
      headersTimeout,
      requestTimeout: Math.max(settings.requestTimeoutMs ?? 30_000, headersTimeout),
      connectionsCheckingInterval: Math.min(1000, headersTimeout),
    },
    (req, res) => {
      inFlight++;
      if (draining) res.shouldKeepAlive = false;
      const own = apiFirst && isUnderBasePath(req.url ?? "/", basePath) ? undefined : serverRoute(pathOf(req));
      if (own) void serveRoute(own, { store, draining }, req, res, responded);
      else api(req, res);
    },
  );
  server.keepAliveTimeout = settings.keepAliveTimeoutMs ?? 5000;
  server.on("clientError", answerClientError); // what the parser refuses gets the Error body too

  let origin: string;
  let port: number;
  try {
    ({ origin, port } = await listen(server, settings.port, settings.host));
  } catch (error) {
    auth.close();
    await store.close();
    throw new ConfigError(
      listenProblem(error, settings.host, settings.port, { port: "PORT or --port", host: "HOST or --host" }),
    );
  }

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= (async () => {
      draining = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => {
        logger.warn({ inFlight }, "grace period over: closing the remaining connections");
        server.closeAllConnections();
      }, settings.shutdownGraceMs ?? 10_000);
      await stopped;
      clearTimeout(grace);
      auth.close();
      await store.close();
      if (options.logger === undefined) await flushLogs(logger); // a logger of our own: finish it
    })();
    return closing;
  }

  return { url: `${origin}${store.basePath}`, port, store, close, reloadKeys: auth.reload };
}
