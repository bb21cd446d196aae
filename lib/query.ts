/**
 * The list query: read from a query string (`limit`, `status` and `cursor`, in one pass) or, in
 * process, from an object checked with its schema; either way a `CheckedListQuery` or `invalid_query`.
 */
import * as v from "valibot";
import type { Refusal } from "./errors.ts";
import { PetStoreError, refuse } from "./errors.ts";
import type { PetStatus } from "./schemas.ts";
import { DEFAULT_LIMIT, issueDetails, ListQuery, MAX_LIMIT, MIN_LIMIT, PET_STATUSES } from "./schemas.ts";

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
function readQuery(raw: string): ListParams | undefined {
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

/** A list query once checked: what the core's `listPets` takes. */
export interface CheckedListQuery {
  readonly status: PetStatus | undefined;
  readonly limit: number;
  readonly cursor: string | undefined;
}

/** The list query from the URL, fully checked, or an invalid_query error. */
export function listQuery(rawQuery: string): CheckedListQuery | Refusal {
  const params = readQuery(rawQuery);
  if (params === undefined) {
    return refuse("invalid_query", "The query string is not valid percent-encoding.");
  }
  const repeated =
    params.limitCount > 1 ? "limit" : params.statusCount > 1 ? "status" : params.cursorCount > 1 ? "cursor" : "";
  if (repeated !== "") {
    return refuse("invalid_query", `${repeated} must be given at most once.`, [
      { path: repeated, message: "is repeated" },
    ]);
  }
  const rawLimit = params.limit;
  let limit = DEFAULT_LIMIT;
  if (rawLimit !== undefined) {
    limit = /^[0-9]{1,3}$/.test(rawLimit) ? Number(rawLimit) : 0;
    if (limit < MIN_LIMIT || limit > MAX_LIMIT) {
      return refuse("invalid_query", "limit must be an integer from 1 to 100.", [
        { path: "limit", message: "must be an integer from 1 to 100" },
      ]);
    }
  }
  const status = params.status;
  if (status !== undefined && !(PET_STATUSES as readonly string[]).includes(status)) {
    return refuse("invalid_query", "status must be one of available, pending, sold.", [
      { path: "status", message: "must be one of available, pending, sold" },
    ]);
  }
  return { status: status as PetStatus | undefined, limit, cursor: params.cursor };
}

/** The list query of the in-process `listPets`, checked, or an `invalid_query` PetStoreError. */
export function checkListQuery(query: unknown = {}): CheckedListQuery {
  const parsed = v.safeParse(ListQuery, query);
  if (!parsed.success) {
    throw new PetStoreError("invalid_query", undefined, { details: issueDetails(parsed.issues) });
  }
  const { status, cursor, limit = DEFAULT_LIMIT } = parsed.output;
  return { status, limit, cursor };
}
