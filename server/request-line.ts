/**
 * The request log line, the one line every request pays for, in pino's own format:
 * `{"level":30,"time":…,"pid":…,"method":"…","path":"…","status":…,"ms":…,"reqId":"…","msg":"request"}`.
 * Two forms of the same bytes: `writeRequestLine` writes it straight into the log writer's
 * buffer (not built as a string, flattened and encoded first: bench/README.md, H1); `requestLineText` is the string,
 * for any other stream and for what the bytes form leaves to it (a character JSON escapes, or
 * beyond ASCII). Their constant parts are written once, here.
 */
import { jsonString } from "petstore-lib/internal";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

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

const latin1 = (text: string) => Buffer.from(text, "latin1");
const PATH_BYTES = latin1(`${PATH}"`); // the path's opening quote: the bytes form writes only plain paths
const PATH_END_BYTES = latin1(`"${STATUS}`);
const MS_BYTES = latin1(MS);
const REQ_ID_BYTES = latin1(REQ_ID);
const PRINCIPAL_BYTES = latin1(`${PRINCIPAL}"`); // the principal's opening quote: the bytes form writes only plain ids
const END_BYTES = latin1(END);
const ABORTED_END_BYTES = latin1(ABORTED_END);

/** The most bytes a line takes beyond its prefix and its three strings. */
export const LINE_EXTRA_BYTES = 128;

/** Copies `s` at `at`; -1 when a character needs JSON escaping or is beyond ASCII. */
function writePlain(out: Uint8Array, at: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) return -1;
    out[at++] = c;
  }
  return at;
}

/** Copies ASCII text known to need no escaping (a prefix made once, the line's constant parts). */
function writeBytes(out: Uint8Array, at: number, bytes: Uint8Array): number {
  out.set(bytes, at);
  return at + bytes.length;
}

/** Writes a non-negative integer below 2^31 in decimal. */
function writeInt(out: Uint8Array, at: number, n: number): number {
  let digits = 1;
  for (let rest = n; rest >= 10; rest = (rest / 10) | 0) digits++;
  for (let i = at + digits - 1, rest = n; i >= at; i--, rest = (rest / 10) | 0) out[i] = 0x30 + (rest % 10);
  return at + digits;
}

/** Writes `ms` as `hundredths(ms)` does; -1 for a value no clock gives (negative, huge, NaN). */
function writeHundredths(out: Uint8Array, at: number, ms: number): number {
  const n = Math.round(ms * 100);
  if (!(n >= 0 && n <= 0x7fffffff)) return -1;
  const whole = (n / 100) | 0;
  const frac = n - whole * 100;
  at = writeInt(out, at, whole);
  if (frac === 0) return at;
  out[at++] = 0x2e; // "."
  out[at++] = 0x30 + ((frac / 10) | 0);
  if (frac % 10 !== 0) out[at++] = 0x30 + (frac % 10);
  return at;
}

/**
 * Writes `{…prefix…<method>","path":"<path>","status":<status>,"ms":<ms>,"reqId":"<reqId>"[,"principal":"<id>"]…}\n`
 * at `at` and returns its end, or -1 when the line needs the string writer (nothing useful is
 * written then). `prefix` ends with `"method":"`. Room for `prefix`, the three strings and
 * LINE_EXTRA_BYTES must be there.
 */
export function writeRequestLine(
  out: Uint8Array,
  at: number,
  prefix: Uint8Array,
  method: string,
  path: string,
  status: number,
  ms: number,
  reqId: string,
  aborted: boolean,
  principal?: string,
): number {
  if (!(Number.isInteger(status) && status >= 0 && status <= 0x7fffffff)) return -1;
  at = writeBytes(out, at, prefix);
  at = writePlain(out, at, method);
  if (at < 0) return -1;
  at = writeBytes(out, at, PATH_BYTES);
  at = writePlain(out, at, path);
  if (at < 0) return -1;
  at = writeBytes(out, at, PATH_END_BYTES);
  at = writeInt(out, at, status);
  at = writeBytes(out, at, MS_BYTES);
  at = writeHundredths(out, at, ms);
  if (at < 0) return -1;
  at = writeBytes(out, at, REQ_ID_BYTES);
  at = writePlain(out, at, reqId);
  if (at < 0) return -1;
  if (principal !== undefined) {
    at = writeBytes(out, at, PRINCIPAL_BYTES);
    at = writePlain(out, at, principal);
    if (at < 0) return -1;
  }
  return writeBytes(out, at, aborted ? ABORTED_END_BYTES : END_BYTES);
}
