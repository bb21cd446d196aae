/**
 * `OTEL_TRACES_EXPORTER=console`: each finished span as one JSON line among the server's log lines
 * (the SDK's ConsoleSpanExporter prints a span over many lines, which no log pipeline reads back).
 * For trying traces without a collector. The SDK's modules are handed in: they load only when asked.
 */
import type { ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";

type Core = typeof import("@opentelemetry/core");

/** The line of one span: its ids, name, kind, times (µs), status, attributes, events and resource. */
function spanLine(core: Core, span: ReadableSpan): string {
  const context = span.spanContext();
  return JSON.stringify({
    msg: "span",
    name: span.name,
    traceId: context.traceId,
    spanId: context.spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    kind: span.kind,
    timestamp: core.hrTimeToMicroseconds(span.startTime),
    duration: core.hrTimeToMicroseconds(span.duration),
    status: span.status,
    attributes: span.attributes,
    events: span.events,
    resource: span.resource.attributes,
  });
}

/** An exporter writing each span with `write` (one line, no newline). */
export function consoleSpanExporter(core: Core, write: (line: string) => void): SpanExporter {
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      for (const span of spans) write(spanLine(core, span));
      done({ code: core.ExportResultCode.SUCCESS });
    },
    shutdown: async () => {},
    forceFlush: async () => {},
  };
}
