/**
 * Building the responses the core returns: every one carries the same four headers, and every
 * error is the contract's Error body with the status its code maps to (lib/errors.ts).
 */
import type { ErrorCode, Refusal } from "./errors.ts";
import { ERRORS } from "./errors.ts";
import type { PetStoreResponse } from "./http.ts";
import type { JsonText } from "./json.ts";

export const JSON_TYPE = "application/json; charset=utf-8";

/**
 * A response: `content-type`, `cache-control: no-store`, the request id and the length in bytes
 * (of the GET body for HEAD, whose body is ""), plus `extra` headers.
 */
export function jsonResponse(
  status: number,
  body: string | JsonText,
  head: boolean,
  requestId: string,
  extra?: Record<string, string>,
  contentType = JSON_TYPE,
): PetStoreResponse {
  const text = typeof body === "string" ? body : body.text;
  const bytes = typeof body === "string" ? Buffer.byteLength(body) : body.bytes;
  return { status, headers: responseHeaders(contentType, requestId, bytes, extra), body: head ? "" : text };
}

/**
 * The headers every response carries, built in this one place: `content-type`, `cache-control:
 * no-store`, `x-request-id` and `content-length` (`bytes`: of the GET body, for HEAD too), then
 * `extra` (which may replace any of them, e.g. a static asset's cache-control).
 */
export function responseHeaders(
  contentType: string,
  requestId: string,
  bytes: number,
  extra?: Record<string, string>,
): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": contentType,
    "cache-control": "no-store",
    "x-request-id": requestId,
    "content-length": String(bytes),
  };
  if (extra) Object.assign(headers, extra);
  return headers;
}

/** The contract's Error response for a refusal or a PetStoreError (same code, message and details). */
export function errorResponse(
  error: Refusal,
  head: boolean,
  requestId: string,
  extra?: Record<string, string>,
): PetStoreResponse {
  const status = error.status ?? ERRORS[error.code as ErrorCode].status;
  const headers = error.code === "storage_unavailable" ? { ...extra, "retry-after": "1" } : extra;
  const body = { code: error.code, message: error.message, status, details: error.details };
  return jsonResponse(status, JSON.stringify(body), head, requestId, headers);
}
