/**
 * The tags of coded answers, for adapters whose host compresses (the Node adapter's own
 * compression, hapi's): a representation coded with br has its own strong tag, the plain one's
 * with the coding after it (`"abc"` → `"abc-br"`, as hapi and Apache write it). The core knows only
 * the plain tags, so a client's `If-None-Match` is turned back into them before the core reads it.
 */
import type { HeaderValue } from "../lib/adapter.ts";
import type { PetStoreRequest } from "../lib/index.ts";

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
function plainTags(ifNoneMatch: HeaderValue, coding: string): string | undefined {
  const header = joined(ifNoneMatch);
  const suffix = `-${coding}"`;
  return header.includes(suffix) ? header.replaceAll(suffix, '"') : undefined;
}

/** Gives the core `request`'s `If-None-Match` in plain tags for the `coding` its client gets (none: as it is). */
export function askWithPlainTags(request: PetStoreRequest, coding: string | undefined): void {
  const plain = coding === undefined ? undefined : plainTags(request.headers["if-none-match"], coding);
  if (plain !== undefined) request.headers = { ...request.headers, "if-none-match": plain }; // a Node req.headers stays as it is
}

/**
 * The tag a `304` of a `coding` answer names: the coded one when the client sent it (a tag holds
 * no `"`, so a quoted tag is found whole) or `*`; else the plain `etag`, whose answer the client
 * holds and may keep.
 */
export function tagHeld(etag: string, coding: string, ifNoneMatch: HeaderValue): string {
  const coded = codedTag(etag, coding);
  const header = joined(ifNoneMatch);
  return header.trim() === "*" || header.includes(coded) ? coded : etag;
}
