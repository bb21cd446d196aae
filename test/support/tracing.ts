/**
 * Spans recorded in memory for the tracing tests: a tracer provider whose finished spans can be
 * read, and the context manager and W3C propagator an application registers (NodeSDK does), set
 * for one test file and removed after it (every test file shares one process).
 */
import { context, propagation, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";

/** Registers a context manager and the W3C propagator; the function returned removes both. */
export function registerContext(): () => void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return () => {
    context.disable();
    propagation.disable();
  };
}

/** A provider that keeps every finished span in memory. */
export function recordSpans() {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  return {
    provider,
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
  };
}

const KINDS: Record<number, string> = {
  [SpanKind.INTERNAL]: "INTERNAL",
  [SpanKind.SERVER]: "SERVER",
  [SpanKind.CLIENT]: "CLIENT",
};

/** A span as the tests compare it: name, kind, its parent's name (or the remote/host span id), attributes, status. */
export interface SpanView {
  name: string;
  kind: string;
  parent: string | undefined;
  attributes: Record<string, unknown>;
  error: boolean;
  exception: string | undefined;
}

/** The spans of one trace, parents named (a parent not among them by its span id), in the order they ended. */
export function viewSpans(spans: readonly ReadableSpan[]): SpanView[] {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s.name]));
  return spans.map((s) => {
    const parentId = s.parentSpanContext?.spanId;
    const exception = s.events.find((e) => e.name === "exception");
    return {
      name: s.name,
      kind: KINDS[s.kind] ?? String(s.kind),
      parent: parentId === undefined ? undefined : (byId.get(parentId) ?? parentId),
      attributes: { ...s.attributes },
      error: s.status.code === SpanStatusCode.ERROR,
      exception: exception?.attributes?.["exception.message"] as string | undefined,
    };
  });
}

/** Every attribute value and event attribute of the spans, as text: to search for what must never be there. */
export function spanText(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events.map((e) => [e.name, e.attributes])]));
}
