/**
 * A request log line written straight into the log writer's bytes: the line every request pays
 * for, so it is not built as a string first (about ten concatenations, then a flattening and a
 * UTF-8 encoding of the whole chunk: some 5,000 instructions a line). The bytes are the same as
 * the string line's (server/logger.ts); a string with a character this writer does not handle
 * (one JSON escapes, or beyond ASCII) is left to the string line.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The line's end after `"reqId":"…"`. */
const END = Buffer.from(',"msg":"request"}\n', "latin1");
const ABORTED_END = Buffer.from(',"aborted":true,"msg":"request"}\n', "latin1");

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

/** Writes `ms` as hundredths, as `hundredths(ms)` does; -1 for a value no clock gives (negative, huge, NaN). */
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

const PATH = Buffer.from('","path":"', "latin1");
const STATUS = Buffer.from('","status":', "latin1");
const MS = Buffer.from(',"ms":', "latin1");
const REQ_ID = Buffer.from(',"reqId":"', "latin1");

/**
 * Writes `{…prefix…<method>","path":"<path>","status":<status>,"ms":<ms>,"reqId":"<reqId>"…}\n`
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
): number {
  if (!(Number.isInteger(status) && status >= 0 && status <= 0x7fffffff)) return -1;
  at = writeBytes(out, at, prefix);
  at = writePlain(out, at, method);
  if (at < 0) return -1;
  at = writeBytes(out, at, PATH);
  at = writePlain(out, at, path);
  if (at < 0) return -1;
  at = writeBytes(out, at, STATUS);
  at = writeInt(out, at, status);
  at = writeBytes(out, at, MS);
  at = writeHundredths(out, at, ms);
  if (at < 0) return -1;
  at = writeBytes(out, at, REQ_ID);
  at = writePlain(out, at, reqId);
  if (at < 0) return -1;
  out[at++] = QUOTE;
  return writeBytes(out, at, aborted ? ABORTED_END : END);
}
