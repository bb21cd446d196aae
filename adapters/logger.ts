/**
 * The standalone server's logs: one JSON line per request through pino, written asynchronously
 * (a buffered destination on stdout) and flushed at shutdown. Only what is passed here is
 * logged: never a header, a query value or a key.
 */
import pino from "pino";
import type { LogLevel } from "./config.ts";

export type Logger = pino.Logger;

/** The asynchronous destinations this module opened, to finish them at shutdown. */
const destinations = new WeakMap<Logger, { dest: ReturnType<typeof pino.destination>; timer: NodeJS.Timeout }>();
const FLUSH_EVERY_MS = 200;

/** One finished (or abandoned) request, as logged. */
export interface RequestLog {
  method: string;
  /** The path without the query string. */
  path: string;
  status: number;
  ms: number;
  reqId: string;
  /** True when the client went away before the answer was sent. */
  aborted?: boolean;
}

/**
 * A logger writing to `destination` (default: an asynchronous destination on stdout).
 * Call `flushLogs(logger)` before exiting.
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  const options = { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.epochTime };
  if (destination) return pino(options, destination);
  // Lines are gathered up to 4 KiB per write (one write per request would cost as much as the
  // request itself under load) and flushed at least every 200 ms, so a quiet server's logs stay live.
  const dest = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const timer = setInterval(() => dest.flush(), FLUSH_EVERY_MS);
  timer.unref();
  const logger = pino(options, dest);
  destinations.set(logger, { dest, timer });
  return logger;
}

/** Writes one request line. */
export function logRequest(logger: Logger, entry: RequestLog): void {
  logger.info(entry, "request");
}

/**
 * Writes every pending line, in order, and closes the logger's own destination; call it last,
 * before exiting. Resolves within `ms` even if stdout is stuck (never rejects).
 */
export function flushLogs(logger: Logger, ms = 2000): Promise<void> {
  const own = destinations.get(logger);
  if (own === undefined) return Promise.resolve();
  destinations.delete(logger);
  clearInterval(own.timer);
  const dest = own.dest;
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    dest.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
    dest.once("error", () => resolve());
    dest.end(); // unlike flush(), end() waits for the write in flight, keeping the order
  });
}
