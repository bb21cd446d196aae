/**
 * The standalone server's traces (contract 1.3, "Traces (OpenTelemetry)"): when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, an OpenTelemetry SDK
 * exporting spans with OTLP over HTTP (protobuf, or JSON with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`);
 * with `OTEL_TRACES_EXPORTER=console`, each span as a line on stdout. Registered for this process
 * (each worker registers its own) and shut down, what is pending flushed, on a graceful stop. The
 * SDK's packages are loaded only then.
 */

import { ConfigError } from "./config.ts";
import { consoleSpanExporter } from "./console-spans.ts";
import { failureLog, reportedExporter, watchedAgent } from "./export-failures.ts";
import type { Logger } from "./logger.ts";
import { writeLine } from "./logger.ts";

export type OtlpProtocol = "http/protobuf" | "http/json";

/** What the `OTEL_*` variables ask of the server: spans to an OTLP endpoint, or printed. */
export type TracingConfig = OtlpTracing | ConsoleTracing;

interface Sampling {
  /** The sampler's name, as `OTEL_TRACES_SAMPLER` spells it. */
  sampler: string;
  /** The ratio of the `traceidratio` samplers (`OTEL_TRACES_SAMPLER_ARG`, default 1). */
  ratio: number;
  /** The batch processor's settings that `OTEL_BSP_*` set (the SDK's defaults otherwise). */
  batch: BatchSettings;
}

export interface OtlpTracing extends Sampling {
  exporter: "otlp";
  protocol: OtlpProtocol;
  /** Where spans are sent (the exporter reads the other OTEL_EXPORTER_OTLP_* variables itself). */
  endpoint: string;
}

/** `OTEL_TRACES_EXPORTER=console`: each span a JSON line on stdout, among the logs. */
export interface ConsoleTracing extends Sampling {
  exporter: "console";
}

/** `OTEL_BSP_SCHEDULE_DELAY`, `_MAX_QUEUE_SIZE`, `_MAX_EXPORT_BATCH_SIZE`, `_EXPORT_TIMEOUT`. */
export interface BatchSettings {
  scheduledDelayMillis?: number;
  maxQueueSize?: number;
  maxExportBatchSize?: number;
  exportTimeoutMillis?: number;
}

const BATCH_VARIABLES: Record<keyof BatchSettings, string> = {
  scheduledDelayMillis: "OTEL_BSP_SCHEDULE_DELAY",
  maxQueueSize: "OTEL_BSP_MAX_QUEUE_SIZE",
  maxExportBatchSize: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
  exportTimeoutMillis: "OTEL_BSP_EXPORT_TIMEOUT",
};

/** The batch settings the environment gives; a value that is not a whole number from 1 is a ConfigError. */
function batchSettings(env: NodeJS.ProcessEnv): BatchSettings {
  const batch: BatchSettings = {};
  for (const [setting, variable] of Object.entries(BATCH_VARIABLES) as [keyof BatchSettings, string][]) {
    const value = set(env, variable);
    if (value === undefined) continue;
    if (!/^[1-9][0-9]{0,8}$/.test(value))
      throw new ConfigError(`${variable} must be a whole number from 1 (got "${value}")`);
    batch[setting] = Number(value);
  }
  return batch;
}

/** The packages each exporter needs, beyond `@opentelemetry/api` and the SDK's own. */
const EXPORTERS: Record<OtlpProtocol, string> = {
  "http/protobuf": "@opentelemetry/exporter-trace-otlp-proto",
  "http/json": "@opentelemetry/exporter-trace-otlp-http",
};
const SDK_PACKAGES = [
  "@opentelemetry/api",
  "@opentelemetry/sdk-trace",
  "@opentelemetry/resources",
  "@opentelemetry/core",
  "@opentelemetry/context-async-hooks",
];

const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
];

/** The variable that set `name`'s value, for messages. */
const set = (env: NodeJS.ProcessEnv, name: string) => {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
};

/**
 * The traces the environment asks for: undefined when neither an OTLP endpoint nor
 * `OTEL_TRACES_EXPORTER=console` is set (or `OTEL_SDK_DISABLED=true`, or `OTEL_TRACES_EXPORTER=none`).
 * A value that cannot work is a ConfigError naming the variable.
 */
export function tracingConfig(env: NodeJS.ProcessEnv): TracingConfig | undefined {
  if (set(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined;
  const exporter = set(env, "OTEL_TRACES_EXPORTER")?.toLowerCase() ?? "otlp";
  if (exporter === "none") return undefined;
  if (exporter !== "otlp" && exporter !== "console") {
    throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp, console or none (got "${exporter}")`);
  }
  if (exporter === "console") return { exporter, ...sampling(env) };
  const traces = set(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const base = set(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (traces === undefined && base === undefined) return undefined;
  const protocolVariable = set(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = set(env, protocolVariable) ?? "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    throw new ConfigError(
      `${protocolVariable} must be http/protobuf or http/json (got "${protocol}"; grpc is not supported)`,
    );
  }
  const endpoint = traces ?? `${(base as string).replace(/\/+$/, "")}/v1/traces`;
  return { exporter, protocol, endpoint, ...sampling(env) };
}

/** The sampler and batch settings, whichever the exporter. */
function sampling(env: NodeJS.ProcessEnv): Sampling {
  const sampler = set(env, "OTEL_TRACES_SAMPLER")?.toLowerCase() ?? "parentbased_always_on";
  if (!SAMPLERS.includes(sampler)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")} (got "${sampler}")`);
  }
  const arg = set(env, "OTEL_TRACES_SAMPLER_ARG");
  const ratio = arg === undefined ? 1 : Number(arg);
  if (sampler.endsWith("traceidratio") && !(ratio >= 0 && ratio <= 1)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 (got "${arg}")`);
  }
  return { sampler, ratio, batch: batchSettings(env) };
}

/** The packages the configuration needs that cannot be loaded (installed or not, they must load). */
async function missingPackages(config: TracingConfig): Promise<string[]> {
  const missing: string[] = [];
  const exporter = config.exporter === "otlp" ? [EXPORTERS[config.protocol]] : [];
  for (const name of [...SDK_PACKAGES, ...exporter]) {
    try {
      await import(name);
    } catch {
      missing.push(name);
    }
  }
  return missing;
}

/** Checks that the SDK's packages load: a ConfigError naming what to install (the primary checks before forking). */
export async function checkTracingPackages(config: TracingConfig): Promise<void> {
  const missing = await missingPackages(config);
  if (missing.length === 0) return;
  throw new ConfigError(
    `traces: ${config.exporter === "otlp" ? "an OTLP endpoint" : "OTEL_TRACES_EXPORTER=console"} is set but ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not installed ` +
      `(npm install ${missing.join(" ")})`,
  );
}

/** Traces being exported: `shutdown` exports what is pending and stops (call it once the server stopped). */
export interface RunningTracing {
  shutdown(): Promise<void>;
}

/** The sampler `OTEL_TRACES_SAMPLER` names. */
function samplerOf(sdk: typeof import("@opentelemetry/sdk-trace"), config: TracingConfig) {
  const root = config.sampler.endsWith("always_off")
    ? new sdk.AlwaysOffSampler()
    : config.sampler.endsWith("traceidratio")
      ? new sdk.TraceIdRatioBasedSampler(config.ratio)
      : new sdk.AlwaysOnSampler();
  return config.sampler.startsWith("parentbased_") ? new sdk.ParentBasedSampler({ root }) : root;
}

/** The exporter the configuration names; an OTLP endpoint's failures are logged (./export-failures.ts). */
async function exporterOf(config: TracingConfig, logger: Logger) {
  const core = await import("@opentelemetry/core");
  if (config.exporter === "console") return consoleSpanExporter(core, (line) => writeLine(logger, line));
  const { OTLPTraceExporter } = (await import(
    EXPORTERS[config.protocol]
  )) as typeof import("@opentelemetry/exporter-trace-otlp-proto");
  const log = failureLog(logger, config.endpoint);
  const otlp = new OTLPTraceExporter({ url: config.endpoint, httpAgentOptions: watchedAgent(log) });
  return reportedExporter(otlp, log, core.ExportResultCode.SUCCESS);
}

/**
 * Registers a tracer provider exporting as configured, the W3C propagators and a context manager
 * for this process. Where an application registered its own provider first (an `--import` of the
 * auto-instrumentation), its provider is kept and nothing of ours is left running.
 */
export async function startTracing(config: TracingConfig, logger: Logger): Promise<RunningTracing> {
  await checkTracingPackages(config);
  const api = await import("@opentelemetry/api");
  const sdk = await import("@opentelemetry/sdk-trace");
  const { resourceFromAttributes, detectResources, resourceAttributesEnvDetector, serviceNameEnvDetector } =
    await import("@opentelemetry/resources");
  const { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } = await import("@opentelemetry/core");
  const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
  // OTEL_SERVICE_NAME, then a service.name of OTEL_RESOURCE_ATTRIBUTES, then "petstore"; the pid tells workers apart.
  const resource = resourceFromAttributes({ "service.name": "petstore", "process.pid": process.pid }).merge(
    detectResources({ detectors: [resourceAttributesEnvDetector, serviceNameEnvDetector] }),
  );
  const exporter = await exporterOf(config, logger);
  const provider = new sdk.TracerProvider({
    resource,
    sampler: samplerOf(sdk, config),
    spanProcessors: [new sdk.BatchSpanProcessor({ ...config.batch, exporter })],
  });
  if (!api.trace.setGlobalTracerProvider(provider)) {
    await provider.shutdown();
    return { shutdown: async () => {} };
  }
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  return { shutdown: () => provider.shutdown() };
}
