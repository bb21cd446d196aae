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
