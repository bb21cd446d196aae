/**
 * The answers the handler gives: every one carries the same four headers, and every refusal is
 * the contract's Error body with the status its code maps to (lib/errors.ts).
 */
import type { Refusal } from "./errors.ts";
import { ERRORS } from "./errors.ts";
import type { PetStoreResponse } from "./handler.ts";
import type { JsonText } from "./json.ts";

const JSON_TYPE = "application/json; charset=utf-8";

/**
 * An answer: `content-type`, `cache-control: no-store`, the request id and the length in bytes
 * (of the GET body for HEAD, whose body is ""), plus `extra` headers.
 */
export function respond(
  status: number,
  body: string | JsonText,
  head: boolean,
  requestId: string,
  extra?: Record<string, string>,
  contentType = JSON_TYPE,
): PetStoreResponse {
  const text = typeof body === "string" ? body : body.text;
  const bytes = typeof body === "string" ? Buffer.byteLength(body) : body.bytes;
  const headers: Record<string, string> = {
    "content-type": contentType,
    "cache-control": "no-store",
    "x-request-id": requestId,
    "content-length": String(bytes),
  };
  if (extra) Object.assign(headers, extra);
  return { status, headers, body: head ? "" : text };
}

/** The contract's Error answer for a refusal or a PetStoreError (same code, message and details). */
export function fail(error: Refusal, head: boolean, requestId: string, extra?: Record<string, string>) {
  const status = ERRORS[error.code].status;
  const headers = error.code === "storage_unavailable" ? { ...extra, "retry-after": "1" } : extra;
  const body = { code: error.code, message: error.message, status, details: error.details };
  return respond(status, JSON.stringify(body), head, requestId, headers);
}
