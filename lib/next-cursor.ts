/**
 * `nextCursor(response)`: the `cursor` of a listPets answer's `Link: <…&cursor=C>; rel="next"`, for
 * clients that take the cursor as a query parameter (generated ones, ours). Reads a `Response`, a
 * generated client's result or Node's header object; no runtime dependency, no `node:` import.
 */

/** Response headers: a `Headers` (or anything with `get(name)`), or a plain object of header fields. */
export type HeadersLike = { get(name: string): unknown } | Readonly<Record<string, unknown>>;

/** Anything that carries response headers: a `Response`, orval's `{ data, status, headers }`, an `IncomingMessage`. */
export interface ResponseLike {
  /** The answer's header fields. */
  readonly headers: HeadersLike;
}

/** Header values as text: an array (Node's form for a repeated field) joined as one list. */
function textOf(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.filter((v) => typeof v === "string").join(", ");
  return undefined;
}

/** Every `Link` value of the headers, in one comma-separated list (field names are case-insensitive). */
function linkValue(headers: HeadersLike): string {
  const get = (headers as { get?: unknown }).get;
  if (typeof get === "function") return textOf(get.call(headers, "link")) ?? "";
  return Object.entries(headers)
    .filter(([name]) => name.toLowerCase() === "link")
    .map(([, value]) => textOf(value) ?? "")
    .join(", ");
}

/** The link relations of one link's parameters (`; rel="next last"`, `; rel=next`), lower-cased. */
function relationsOf(parameters: string): string[] {
  const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))/i.exec(parameters);
  return (rel?.[1] ?? rel?.[2] ?? "").toLowerCase().split(/\s+/);
}

/** The target of the first link whose relations include `next` (RFC 8288 section 3), or undefined. */
function nextTarget(value: string): string | undefined {
  let at = 0;
  for (;;) {
    const open = value.indexOf("<", at);
    const close = value.indexOf(">", open + 1);
    if (open < 0 || close < 0) return undefined;
    // The link's parameters run to the next comma outside a quoted string.
    let end = close + 1;
    for (let quoted = false; end < value.length && (quoted || value[end] !== ","); end++) {
      if (value[end] === "\\" && quoted) end++;
      else if (value[end] === '"') quoted = !quoted;
    }
    if (relationsOf(value.slice(close + 1, end)).includes("next")) return value.slice(open + 1, close);
    at = end + 1;
  }
}

/**
 * The cursor of the next page, read from the answer's `Link: <…&cursor=C>; rel="next"`; undefined
 * on the last page (no `rel="next"`). Pass it back as listPets' `cursor` query parameter.
 *
 * @example
 * let cursor: string | undefined;
 * do {
 *   const page = await listPets({ query: { limit: 100, cursor } }); // a generated client
 *   use(page.data);
 *   cursor = nextCursor(page.response);
 * } while (cursor !== undefined);
 */
export function nextCursor(response: ResponseLike): string | undefined {
  const target = nextTarget(linkValue(response.headers));
  if (target === undefined) return undefined;
  try {
    return new URL(target, "http://link.invalid").searchParams.get("cursor") || undefined;
  } catch {
    return undefined; // not a URL: no cursor to follow
  }
}
