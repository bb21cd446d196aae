/**
 * The test kit's journal of requests (`requests()`): one record per request received, in order,
 * since the last `reset()`: what a test asserts about the calls its code made. It keeps what
 * identifies a request and never a header's value other than the request id and the idempotency
 * key: no `Authorization`, no body.
 */
import type { PetStoreRequest, PetStoreResponse } from "../lib/index.ts";

/** One request as the kit received it. */
export interface RequestRecord {
  method: string;
  /** The path as sent (percent-encoded), without the query string. */
  path: string;
  /** The query string without its "?" ("" when none). */
  query: string;
  /** The answer's status; `0` when the connection was closed before the request was read. */
  status: number;
  /** The answer's `X-Request-Id` (for a request not answered: the client's, or ""). */
  requestId: string;
  /** The `Idempotency-Key` sent, without quotes. */
  idempotencyKey?: string;
  /** True when the answer replayed an earlier create (`Idempotent-Replayed: true`). */
  replayed: boolean;
  /**
   * Set when `failNext` lost the connection: `"reset"` before the request was read (the store never
   * saw it), `"after-commit"` after the store's answer (`status`) was made: it was never sent.
   */
  lost?: "reset" | "after-commit";
}

/** The most records kept: the oldest go first, so a long-lived test server does not grow. */
export const JOURNAL_LIMIT = 10_000;

/** A header's first value, whatever the case of its name. */
export function headerOf(headers: PetStoreRequest["headers"], name: string): string | undefined {
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() !== name) continue;
    const value = headers[key];
    return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/** The record of `request`, answered with `response` (none: not read). */
export function recordOf(
  request: PetStoreRequest,
  response: PetStoreResponse | undefined,
  lost?: RequestRecord["lost"],
): RequestRecord {
  const raw = request.query ?? "";
  const key = headerOf(request.headers, "idempotency-key")?.trim();
  const record: RequestRecord = {
    method: request.method,
    path: request.path,
    query: raw.startsWith("?") ? raw.slice(1) : raw,
    status: response?.status ?? 0,
    requestId: response?.headers["x-request-id"] ?? headerOf(request.headers, "x-request-id") ?? "",
    ...(key === undefined ? {} : { idempotencyKey: key.replace(/^"(.*)"$/, "$1") }),
    replayed: response?.headers["idempotent-replayed"] === "true",
  };
  if (lost !== undefined) record.lost = lost;
  return record;
}

/** The records, oldest first, at most JOURNAL_LIMIT. */
export class Journal {
  private records: RequestRecord[] = [];

  add(record: RequestRecord): void {
    this.records.push(record);
    if (this.records.length > JOURNAL_LIMIT) this.records.splice(0, this.records.length - JOURNAL_LIMIT);
  }

  /** A copy: what a test holds does not change under it. */
  list(): RequestRecord[] {
    return this.records.map((r) => ({ ...r }));
  }

  clear(): void {
    this.records = [];
  }
}
