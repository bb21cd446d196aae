/**
 * The request log line, the one line every request pays for, in pino's own format:
 * `{"level":30,"time":…,"pid":…,"method":"…","path":"…","status":…,"ms":…,"reqId":"…","msg":"request"}`.
 * One string, encoded once by the log writer: writing it byte by byte from JavaScript cost more
 * (a call per character of a sliced or joined string: bench/README.md, "Instructions a request").
 */
import { jsonString } from "petstore-lib/internal";

const PATH = '","path":';
const STATUS = ',"status":';
const MS = ',"ms":';
const REQ_ID = ',"reqId":"';
/** After `"reqId":"…`, the caller once authenticated (its principal's id, never a key). */
const PRINCIPAL = '","principal":';
/** After `"reqId":"…`, when the request's span was recorded (a trace id is 32 hex digits: nothing to escape). */
const TRACE_ID = '","trace_id":"';
/** The line's end after `"reqId":"…`. */
const END = '","msg":"request"}\n';
const ABORTED_END = '","aborted":true,"msg":"request"}\n';

/**
 * `ms` rounded to hundredths, as `String(Math.round(ms * 100) / 100)` writes it, from two small
 * integers (formatting a fraction is a double's slow path).
 */
export function hundredths(ms: number): string {
  const n = Math.round(ms * 100);
  if (!(n >= 0 && n <= 0x7fffffff)) return String(n / 100); // negative, huge or NaN: never from a clock
  const whole = (n / 100) | 0;
  const frac = n - whole * 100;
  if (frac === 0) return `${whole}`;
  if (frac % 10 === 0) return `${whole}.${frac / 10}`;
  return frac < 10 ? `${whole}.0${frac}` : `${whole}.${frac}`;
}

/**
 * The line as a string. `start` ends with `"method":"`; `method` and `reqId` cannot hold a
 * character JSON must escape (a token; `requestIdOf`'s id), `path` is escaped when it needs it;
 * `principal` (escaped) follows `reqId` once the caller was authenticated, then `trace_id` when a
 * span was recorded.
 */
export function requestLineText(
  start: string,
  method: string,
  path: string,
  status: number,
  ms: number,
  reqId: string,
  aborted: boolean,
  traceId?: string,
  principal?: string,
): string {
  // Each part after reqId opens with the quote that closes the string before it; a principal is
  // escaped with its own quotes, so the part after it loses its opening one.
  let tail = `${traceId === undefined ? "" : `${TRACE_ID}${traceId}`}${aborted ? ABORTED_END : END}`;
  if (principal !== undefined) tail = `${PRINCIPAL}${jsonString(principal)}${tail.slice(1)}`;
  return `${start}${method}${PATH}${jsonString(path)}${STATUS}${status}${MS}${hundredths(ms)}${REQ_ID}${reqId}${tail}`;
}
