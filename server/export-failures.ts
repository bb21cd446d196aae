/**
 * An OTLP endpoint that fails is logged once, as it first fails: the exporter retries a failed
 * batch for seconds (up to its timeout) before it reports, and reports every batch. Connection
 * errors are seen on its sockets at the first attempt; other failures (a 404) when the batch is reported.
 * A success re-arms it, so each outage is one line.
 */
import http from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import type { ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import type { Logger } from "./logger.ts";

/** Warns once per outage; `fine` after a success. */
export function failureLog(logger: Logger, endpoint: string) {
  let failing = false;
  return {
    failed(error: unknown) {
      if (failing) return;
      failing = true;
      const message = error instanceof Error ? error.message : String(error);
      logger.warn({ endpoint, error: message }, `traces: cannot export spans to ${endpoint}: ${message}`);
    },
    fine() {
      failing = false;
    },
  };
}

export type FailureLog = ReturnType<typeof failureLog>;

/** The exporter's HTTP agent (its `httpAgentOptions` factory): its sockets' errors go to `log`. */
export function watchedAgent(log: FailureLog) {
  return async (protocol: string): Promise<http.Agent> => {
    const Agent = protocol === "https:" ? https.Agent : http.Agent;
    const agent = new Agent({ keepAlive: true });
    const create = agent.createConnection.bind(agent) as (...args: unknown[]) => Socket;
    agent.createConnection = (...args: unknown[]) => {
      const socket = create(...args);
      socket.once("error", (error) => log.failed(error));
      return socket;
    };
    return agent;
  };
}

/** `exporter`, with each batch's result told to `log`. */
export function reportedExporter(exporter: SpanExporter, log: FailureLog, success: number): SpanExporter {
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      exporter.export(spans, (result) => {
        if (result.code === success) log.fine();
        else log.failed(result.error ?? "export failed");
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
