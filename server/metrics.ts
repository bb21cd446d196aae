/**
 * The standalone server's Prometheus metrics, built on the store's `observe` option:
 * `http_server_request_duration_seconds`, `petstore_storage_operation_duration_seconds`,
 * `petstore_storage_errors_total`, the storage breaker's state and changes, `petstore_rate_limited_total`,
 * `petstore_invalid_records_total`, and the process's
 * default metrics, on a port of their own.
 * prom-client (an optional peer) is loaded only when PETSTORE_METRICS_PORT is set.
 */
import { createServer, type Server } from "node:http";
import { requestIdOf } from "petstore-lib/adapter";
import { answerClientError, mustClose } from "petstore-lib/node-http";
import type { Observer } from "petstore-lib/observe";
import { bodyTooLarge, tooLargeAnswer } from "./body-limit.ts";
import { ConfigError } from "./config.ts";
import { listen, listenProblem } from "./listen.ts";

type PromClient = typeof import("prom-client");
type Registry = import("prom-client").Registry;

/** OpenTelemetry's recommended buckets for `http.server.request.duration`, in seconds. */
export const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
/** Storage calls are faster than requests: the low end is finer. */
export const STORAGE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Methods kept as they are; any other becomes "_OTHER" (OpenTelemetry's rule): a client picks the method. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]);

const LINT_FAILURES = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

/** Loads prom-client, or explains in one line how to get it (exit 2). */
export async function loadPromClient(): Promise<PromClient> {
  try {
    const loaded = (await import("prom-client")) as PromClient & { default?: PromClient };
    return loaded.default ?? loaded;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
      throw new ConfigError("PETSTORE_METRICS_PORT needs the prom-client package: npm install prom-client@15");
    }
    throw error;
  }
}

interface Series {
  labels: Record<string, string | number>;
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * A histogram counted in plain arrays, registered in a prom-client registry as a metric:
 * prom-client's own `observe` hashes the label object each time, two per request, where a series
 * is found here by its label values (bench/README.md, O1). prom-client still formats it,
 * and its cluster aggregator sums it across workers.
 */
class Histogram {
  private readonly series = new Map<string, Series>();
  readonly aggregator = "sum";
  readonly type = "histogram";

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  /** A new series: `key` with these labels. */
  add(key: string, labels: Record<string, string | number>): Series {
    const s = { labels, buckets: new Array(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
    this.series.set(key, s);
    return s;
  }

  /** Counts `value` in series `s`. */
  observe(s: Series, value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    (s.buckets[i] as number)++;
    s.sum += value;
    s.count++;
  }

  /** prom-client's metric shape: the values of every series, buckets cumulative. */
  get() {
    const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
    for (const s of this.series.values()) {
      let seen = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        seen += s.buckets[i] as number;
        const le = i < this.bounds.length ? (this.bounds[i] as number) : "+Inf";
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: seen });
      }
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Counts start again from zero (the series stay, as prom-client's reset does). */
  reset(): void {
    for (const s of this.series.values()) {
      s.buckets.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}

export interface Metrics {
  /** The observer to give `createPetStore({ observe })`. */
  observe: Observer;
  /** The registry holding the server's metrics and the default process metrics. */
  registry: Registry;
}

/** The server's metrics in a registry of their own, fed by the returned observer. */
export function createMetrics(prom: PromClient): Metrics {
  const registry = new prom.Registry();
  prom.collectDefaultMetrics({ register: registry });
  // Gauges named like counters, which `promtool check metrics` refuses; each is the sum of the
  // labelled gauge of the same name without "_total" (nodejs_active_handles{type}, …).
  for (const name of LINT_FAILURES) registry.removeSingleMetric(name);
  const requests = new Histogram(
    "http_server_request_duration_seconds",
    "Duration of HTTP server requests answered by the Pet Store API.",
    REQUEST_BUCKETS,
  );
  const storage = new Histogram(
    "petstore_storage_operation_duration_seconds",
    "Duration of calls to the storage backend.",
    STORAGE_BUCKETS,
  );
  for (const metric of [requests, storage]) registry.registerMetric(metric as never);
  const errors = new prom.Counter({
    name: "petstore_storage_errors_total",
    help: "Calls to the storage backend that failed or timed out (answered 503 storage_unavailable).",
    labelNames: ["operation", "backend"],
    registers: [registry],
  });

  const breakerOpen = new prom.Gauge({
    name: "petstore_storage_breaker_open",
    help: "1 while the storage breaker is open (calls answered 503 at once, the backend known to be down), else 0. Summed over workers.",
    labelNames: ["backend"],
    registers: [registry],
    aggregator: "sum",
  });
  const breakerChanges = new prom.Counter({
    name: "petstore_storage_breaker_changes_total",
    help: "Times the storage breaker opened or closed.",
    labelNames: ["backend", "state"],
    registers: [registry],
  });

  const rateLimited = new prom.Counter({
    name: "petstore_rate_limited_total",
    help: "Requests refused by the rate limits (429 rate_limited).",
    registers: [registry],
  });

  const invalidRecords = new prom.Counter({
    name: "petstore_invalid_records_total",
    help: "Stored records met that cannot be read (a pet's own read answers 500, a page leaves it out).",
    labelNames: ["backend"],
    registers: [registry],
  });

  // Called for every request and storage call: no closure, and series found through maps keyed by
  // the values themselves (a key string built per call would be hashed per call).
  const byRoute = new Map<string | undefined, Map<number, Map<string, Series>>>();
  const byOperation = new Map<string, Map<string, Series>>();
  const observe: Observer = (o) => {
    if (o.kind === "request") {
      const method = METHODS.has(o.method) ? o.method : "_OTHER";
      const { route, status } = o;
      let byStatus = byRoute.get(route);
      if (byStatus === undefined) {
        byStatus = new Map();
        byRoute.set(route, byStatus);
      }
      let byMethod = byStatus.get(status);
      if (byMethod === undefined) {
        byMethod = new Map();
        byStatus.set(status, byMethod);
      }
      let series = byMethod.get(method);
      if (series === undefined) {
        const labels = {
          http_request_method: method,
          ...(route === undefined ? {} : { http_route: route }),
          http_response_status_code: status,
        };
        series = requests.add(`${method} ${status} ${route ?? ""}`, labels);
        byMethod.set(method, series);
      }
      requests.observe(series, o.durationMs / 1000);
      return;
    }
    if (o.kind === "breaker") {
      breakerOpen.set({ backend: o.backend }, o.state === "open" ? 1 : 0);
      breakerChanges.inc({ backend: o.backend, state: o.state });
      return;
    }
    if (o.kind === "rateLimited") {
      rateLimited.inc();
      return;
    }
    if (o.kind === "invalidRecord") {
      invalidRecords.inc({ backend: o.backend });
      return;
    }
    const { operation, backend } = o;
    let byBackend = byOperation.get(operation);
    if (byBackend === undefined) {
      byBackend = new Map();
      byOperation.set(operation, byBackend);
    }
    let series = byBackend.get(backend);
    if (series === undefined) {
      series = storage.add(`${operation} ${backend}`, { operation, backend });
      byBackend.set(backend, series);
    }
    storage.observe(series, o.durationMs / 1000);
    if (o.failed) errors.inc({ operation, backend });
  };
  return { observe, registry };
}

export interface MetricsServer {
  /** e.g. "http://127.0.0.1:9464/metrics" (the real port when 0 was asked for). */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (and HEAD) on `host:port` with what `render()` gives; 404 elsewhere, 503
 * when the figures cannot be gathered (a worker that does not answer in time), 413 for a request
 * body over `maxBodyBytes` (the store's default limit). Rejects with a ConfigError when the port
 * cannot be listened on.
 */
export async function serveMetrics(
  host: string,
  port: number,
  render: () => Promise<string>,
  contentType: string,
  maxBodyBytes = 64 * 1024,
): Promise<MetricsServer> {
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const head = req.method === "HEAD";
    const text = (status: number, body: string, type = "text/plain; charset=utf-8") => {
      res.writeHead(status, {
        "content-type": type,
        "content-length": Buffer.byteLength(body),
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
        // An unread body may be large: close rather than let Node drain it.
        ...(mustClose(req, req.headers, maxBodyBytes) ? { connection: "close" } : {}),
      });
      res.end(head ? undefined : body);
    };
    if (path !== "/metrics") return text(404, "Not found: the metrics are at /metrics\n");
    if (req.method !== "GET" && !head) {
      res.setHeader("allow", "GET, HEAD");
      return text(405, "Method not allowed\n");
    }
    if (await bodyTooLarge(req, maxBodyBytes)) {
      const refused = tooLargeAnswer(maxBodyBytes, head, requestIdOf(req.headers["x-request-id"]));
      res.writeHead(refused.status, refused.headers);
      return res.end(refused.body);
    }
    render().then(
      (body) => text(200, body, contentType),
      () => text(503, "The metrics could not be gathered; try again\n"),
    );
  });
  server.on("clientError", answerClientError);
  server.keepAliveTimeout = 5000;
  let origin: string;
  try {
    ({ origin } = await listen(server, port, host));
  } catch (error) {
    const settings = { port: "PETSTORE_METRICS_PORT or --metrics-port", host: "HOST or --host" };
    throw new ConfigError(`metrics: ${listenProblem(error, host, port, settings)}`);
  }
  return {
    url: `${origin}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
