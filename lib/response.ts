/**
 * The answers the core builds. A `Responder` is made once per request: it knows whether the
 * request is HEAD and which id the answer carries, so every answer gets the same five headers (a
 * `304` those of them it keeps) and every error the contract's Error body with the status of its
 * code (lib/errors.ts).
 */
import type { ErrorCode, Refusal } from "./errors.ts";
import { ERRORS } from "./errors.ts";
import type { PetStoreResponse } from "./http.ts";
import type { JsonText } from "./json.ts";
import { utf8Length } from "./text.ts";

export const JSON_TYPE = "application/json; charset=utf-8";

/**
 * The headers every answer carries, built in this one place: `content-type`, `cache-control:
 * no-store`, `x-request-id`, `content-length` and `x-content-type-options: nosniff` (`bytes`: of the GET body, for HEAD too), then
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
    "x-content-type-options": "nosniff",
  };
  if (extra) Object.assign(headers, extra);
  return headers;
}

/** Builds the answers to one request. @example new Responder({ head: false, requestId: "req-1" }).json(200, "[]") */
export class Responder {
  /** True for HEAD: answers carry the GET body's length and no body. */
  head: boolean;
  /** The `X-Request-Id` of every answer. */
  requestId: string;

  constructor(request: { head: boolean; requestId: string }) {
    this.head = request.head;
    this.requestId = request.requestId;
  }

  /** A JSON answer, with `headers` beside (or instead of) the five every answer carries. */
  json(status: number, body: string | JsonText, headers?: Record<string, string>): PetStoreResponse {
    const text = typeof body === "string" ? body : body.text;
    const bytes = typeof body === "string" ? utf8Length(body) : body.bytes;
    return {
      status,
      headers: responseHeaders(JSON_TYPE, this.requestId, bytes, headers),
      body: this.head ? "" : text,
    };
  }

  /**
   * `304 Not Modified`: no body, no type, and of the 200's headers only those RFC 9110 §15.4.5 keeps
   * (`headers`: its ETag, Cache-Control and the like), with the 200's length (`bytes`) as HEAD has.
   */
  notModified(bytes: number, headers: Record<string, string>): PetStoreResponse {
    return {
      status: 304,
      headers: {
        "x-request-id": this.requestId,
        "content-length": String(bytes),
        "x-content-type-options": "nosniff",
        ...headers,
      },
      body: "",
    };
  }

  /** The contract's Error answer for a refusal or a `PetStoreError` (same code, message and details). */
  error(error: Refusal, headers?: Record<string, string>): PetStoreResponse {
    const status = error.status ?? ERRORS[error.code as ErrorCode].status;
    const retry = error.code === "storage_unavailable" || error.code === "idempotency_key_in_use";
    const body = { code: error.code, message: error.message, status, details: error.details };
    return this.json(status, JSON.stringify(body), retry ? { ...headers, "retry-after": "1" } : headers);
  }
}
