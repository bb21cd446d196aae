/** Reading the list query string: `limit`, `status` and `cursor`, in one pass. */

/** The list query's own parameters as given (others are ignored), with how often each came. */
interface ListParams {
  limit: string | undefined;
  status: string | undefined;
  cursor: string | undefined;
  limitCount: number;
  statusCount: number;
  cursorCount: number;
}

/** A query string's name or value, percent- and plus-decoded (throws on bad percent-encoding). */
function decoded(part: string): string {
  return part.includes("%") || part.includes("+") ? decodeURIComponent(part.replace(/\+/g, " ")) : part;
}

/**
 * Reads `limit`, `status` and `cursor` from a query string in one pass, without building a map
 * of everything. Undefined when one of them is not valid percent-encoding (an unknown parameter
 * that is not is ignored, as unknown parameters are).
 */
export function readQuery(raw: string): ListParams | undefined {
  const params: ListParams = {
    limit: undefined,
    status: undefined,
    cursor: undefined,
    limitCount: 0,
    statusCount: 0,
    cursorCount: 0,
  };
  for (let start = 0; start < raw.length; ) {
    let end = raw.indexOf("&", start);
    if (end === -1) end = raw.length;
    if (end > start) {
      const eq = raw.indexOf("=", start);
      const split = eq !== -1 && eq < end;
      let name = raw.slice(start, split ? eq : end);
      let value = split ? raw.slice(eq + 1, end) : "";
      try {
        name = decoded(name);
        value = decoded(value);
      } catch {
        if (name === "limit" || name === "status" || name === "cursor") return undefined;
      }
      if (name === "limit") {
        if (params.limitCount++ === 0) params.limit = value;
      } else if (name === "status") {
        if (params.statusCount++ === 0) params.status = value;
      } else if (name === "cursor") {
        if (params.cursorCount++ === 0) params.cursor = value;
      }
    }
    start = end + 1;
  }
  return params;
}
