/**
 * The one error for a storage that cannot be opened as configured: a bad URL or option, a
 * driver package that is not installed, a backend that does not answer at open time. Its
 * message is one line meant for an operator, and never carries a password.
 */

/** A storage that cannot be opened as configured (bad URL, driver missing, backend unreachable). */
export class StorageConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StorageConfigError";
  }
}

/** The URL with its password replaced by `***`. @example redactUrl("redis://:s3cret@h:6379") === "redis://:***@h:6379" */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@?#]*:)[^@/?#]*@/i, "$1***@");
}

/** The first line of an error's message, for a one-line operator message. */
export function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split("\n")[0]?.trim();
  if (line) return line;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "no answer";
}

/**
 * The errors an error is made of: itself, its `cause` chain, an AggregateError's `errors` (Node's
 * happy eyeballs), and the `originalError` / `socketError` node-redis wraps.
 */
function parts(error: unknown, seen = new Set<unknown>()): unknown[] {
  if (error === null || error === undefined || seen.has(error)) return [];
  seen.add(error);
  const out: unknown[] = [error];
  const shaped = error as { cause?: unknown; errors?: unknown; originalError?: unknown; socketError?: unknown };
  if (Array.isArray(shaped.errors)) for (const inner of shaped.errors) out.push(...parts(inner, seen));
  for (const inner of [shaped.cause, shaped.originalError, shaped.socketError]) out.push(...parts(inner, seen));
  return out;
}

const CAUSES: [RegExp, string][] = [
  [/^ECONNREFUSED$/, "connection refused"],
  [/^(ENOTFOUND|EAI_AGAIN|EAI_NONAME|EAI_FAIL)$/, "unknown host"],
  [/^(ETIMEDOUT|ESOCKETTIMEDOUT)$/, "timed out"],
  [/^(EACCES|EPERM)$/, "permission denied"],
  [/^EROFS$/, "read-only file system"],
  [/^ENOTDIR$/, "not a directory"],
  [/^ENOENT$/, "no such directory"],
  [/^EISDIR$/, "is a directory"],
  [/^(EHOSTUNREACH|ENETUNREACH)$/, "host unreachable"],
  [/^(ECONNRESET|EPIPE)$/, "connection closed by the server"],
];

const MESSAGES: [RegExp, string][] = [
  [/timeout|timed out/i, "timed out"],
  [
    /socket closed unexpectedly|connection terminated unexpectedly|connection closed/i,
    "connection closed by the server",
  ],
  [/password authentication failed|WRONGPASS|NOAUTH|invalid username-password/i, "authentication failed"],
];

/**
 * What went wrong, in a few words an operator acts on ("connection refused", "unknown host",
 * "timed out", "permission denied", …), followed by the driver's code or first line in brackets.
 * A time-out anywhere in the chain wins over the closed connection it causes.
 *
 * @example causeOf(connectError) === "connection refused [ECONNREFUSED]"
 */
export function causeOf(error: unknown): string {
  const all = parts(error);
  for (const part of all) {
    const code = (part as { code?: unknown } | null)?.code;
    if (typeof code !== "string") continue;
    for (const [pattern, words] of CAUSES) if (pattern.test(code)) return `${words} [${code}]`;
  }
  for (const [pattern, words] of MESSAGES) {
    for (const part of all) {
      const message = reason(part);
      if (pattern.test(message)) return `${words} [${message}]`;
    }
  }
  return reason(error);
}

/**
 * The server's own refusal when it was reached and said no (a login, role, database or
 * permission it refuses), or undefined for a failure on the way to it. Redis refuses with a reply
 * error (`ERR`, `WRONGPASS`, `NOAUTH`, `NOPERM`); Postgres with an SQLSTATE code.
 */
function refusalOf(error: unknown): string | undefined {
  for (const part of parts(error)) {
    const { name, code } = part as { name?: unknown; code?: unknown };
    const message = reason(part);
    if (name === "ErrorReply" || /^(ERR|WRONGPASS|NOAUTH|NOPERM)\b/.test(message)) return message;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !/^08/.test(code)) return `${message} [${code}]`;
  }
  return undefined;
}

/**
 * "host 127.0.0.1, port 6379" from a server URL (its defaults when the URL omits them), or
 * `undefined` when the URL cannot be read.
 */
export function hostAndPort(url: string, defaultPort: number): string | undefined {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname === "" ? "localhost" : parsed.hostname;
    return `host ${host}, port ${parsed.port === "" ? defaultPort : parsed.port}`;
  } catch {
    return undefined;
  }
}

/**
 * The start-up error of a network backend that cannot be used, on one line: the backend, the host
 * and port, the URL without its password, and why: the server's refusal ("refused: …"), or what
 * kept it from answering ("cannot reach …: connection refused", "timed out after 2000 ms", …).
 *
 * @example unreachable("redis", "redis://:pw@127.0.0.1:1", 6379, refused).message ===
 *   "cannot reach redis at host 127.0.0.1, port 1 (redis://:***@127.0.0.1:1): connection refused [ECONNREFUSED]"
 */
export function unreachable(
  backend: string,
  url: string,
  defaultPort: number,
  error: unknown,
  waitedMs?: number,
): StorageConfigError {
  const where = hostAndPort(url, defaultPort);
  const shown = redactUrl(url);
  const place = `${backend} at ${where === undefined ? shown : `${where} (${shown})`}`;
  const refusal = refusalOf(error);
  if (refusal !== undefined)
    return new StorageConfigError(`${place} was reached but refused: ${refusal}`, { cause: error });
  let cause = causeOf(error);
  if (waitedMs !== undefined && cause.startsWith("timed out")) {
    cause = `timed out after ${Math.round(waitedMs)} ms${cause.slice("timed out".length)}`;
  }
  return new StorageConfigError(`cannot reach ${place}: ${cause}`, { cause: error });
}
