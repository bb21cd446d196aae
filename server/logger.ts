/**
 * The standalone server's logs: pino, and one JSON line per request, written asynchronously
 * through a buffered destination on stdout (./line-writer.ts) and flushed at shutdown. Only what is passed here is
 * logged: never a header, a query value or a key.
 */
import cluster from "node:cluster";
import pino from "pino";
import type { LogLevel } from "./config.ts";
import { LineWriter } from "./line-writer.ts";
import { hundredths, requestLineText } from "./request-line.ts";

export type Logger = pino.Logger;

/** The buffered destinations this module opened, to finish them at shutdown. */
const destinations = new WeakMap<Logger, LineWriter>();
/** The stream of each logger made here, which request lines are written to (see `requestLogger`). */
const streams = new WeakMap<Logger, pino.DestinationStream>();

/**
 * A logger writing to `destination` (default: an asynchronous destination on stdout).
 * Call `flushLogs(logger)` before exiting.
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  const options = { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.epochTime };
  // The workers of a cluster share stdout: their lines must never interleave.
  const own = destination === undefined ? new LineWriter(1, cluster.isWorker) : undefined;
  const stream = destination ?? (own as LineWriter);
  const logger = pino(options, stream);
  streams.set(logger, stream);
  if (own !== undefined) destinations.set(logger, own);
  return logger;
}

/**
 * Writes one request line. `method` is as Node's parser gives it (a token) and `reqId` as
 * `requestIdOf` gives it: neither can hold a character JSON must escape, so they are written as
 * they are; `path` is escaped when it needs it. `ms` is rounded to hundredths; `aborted` when the
 * client went away before the answer; `traceId` when the request's span was recorded; `principal`
 * the caller's id once authenticated (never a key).
 */
export type RequestLogger = (
  method: string,
  path: string,
  status: number,
  ms: number,
  reqId: string,
  aborted: boolean,
  traceId?: string,
  principal?: string,
) => void;

/**
 * The writer of request lines, in pino's own format, onto the stream the logger was made with
 * (`createLogger`). Written by hand because it is the one line every request pays for (its cost
 * against pino's own serialiser: bench/README.md). Same stream, so order is kept; the level is
 * checked again only when it changes (pino's "level-change" event). A logger made elsewhere
 * gets its lines through `logger.info`.
 */
export function requestLogger(logger: Logger): RequestLogger {
  const stream = streams.get(logger);
  const afterTime = `,"pid":${process.pid},"method":"`;
  // The line's start changes once a millisecond: made then, not per line (a time is a double, whose
  // text costs a dtoa each time).
  let now = 0;
  let start = "";
  let enabled = logger.isLevelEnabled("info");
  logger.on("level-change", () => {
    enabled = logger.isLevelEnabled("info");
  });
  return (method, path, status, ms, reqId, aborted, traceId, principal) => {
    if (!enabled) return;
    if (stream === undefined) {
      const who = principal === undefined ? {} : { principal };
      const traced = traceId === undefined ? {} : { trace_id: traceId };
      const gone = aborted ? { aborted } : {};
      logger.info({ method, path, status, ms: Number(hundredths(ms)), reqId, ...who, ...traced, ...gone }, "request");
      return;
    }
    const time = Date.now();
    if (time !== now) {
      now = time;
      start = `{"level":30,"time":${time}${afterTime}`;
    }
    stream.write(requestLineText(start, method, path, status, ms, reqId, aborted, traceId, principal));
  };
}

/** Writes a line of its own (`line`, without its newline) among the logger's, whatever its level. */
export function writeLine(logger: Logger, line: string): void {
  (streams.get(logger) ?? process.stdout).write(`${line}\n`);
}

/** The end of each logger's own destination, once `flushLogs` began it. */
const endings = new WeakMap<Logger, Promise<void>>();

/**
 * Writes every pending line, in order, and closes the logger's own destination; call it last,
 * before exiting (a second call waits for the same end). Resolves within `ms` even if stdout is
 * stuck (never rejects).
 */
export function flushLogs(logger: Logger, ms = 2000): Promise<void> {
  let ending = endings.get(logger);
  if (ending === undefined) {
    const dest = destinations.get(logger);
    if (dest === undefined) return Promise.resolve();
    ending = dest.end();
    endings.set(logger, ending);
  }
  const ended = ending;
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void ended.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
