/**
 * The tags of coded answers, for adapters whose host compresses (the Node adapter's own
 * compression, hapi's): a representation coded with br has its own strong tag, the plain one's
 * with the coding after it (`"abc"` → `"abc-br"`, as hapi and Apache write it). The core knows only
 * the plain tags, so a client's `If-None-Match` is turned back into them before the core reads it.
 */
import type { HeaderValue } from "../lib/adapter.ts";

/** The representation's own tag: `"abc"` coded with br is `"abc-br"`. */
export function codedTag(etag: string, coding: string): string {
  return `${etag.slice(0, -1)}-${coding}"`;
}

/** A header's values as one list. */
const joined = (value: HeaderValue): string => (typeof value === "string" ? value : (value ?? []).join(", "));

/**
 * `If-None-Match` as the core compares it: each tag of a `coding` answer (`"abc-br"`, also
 * weakened by a proxy: `W/"abc-br"`) turned back into the plain answer's (`"abc"`). Undefined when
 * there is nothing to turn back.
 */
export function plainTags(ifNoneMatch: HeaderValue, coding: string): string | undefined {
  const header = joined(ifNoneMatch);
  const suffix = `-${coding}"`;
  return header.includes(suffix) ? header.replaceAll(suffix, '"') : undefined;
}

/** True when `If-None-Match` is `*` or names `etag` (a tag holds no `"`, so a quoted tag is found whole). */
export function holdsTag(ifNoneMatch: HeaderValue, etag: string): boolean {
  const header = joined(ifNoneMatch);
  return header.trim() === "*" || header.includes(etag);
}
