/**
 * The request body of a create, before it is a NewPet: what its headers say (type, announced
 * size) and what its bytes are (size, UTF-8, JSON). Every refusal is a contract answer.
 */
import type { Refusal } from "./errors.ts";
import { refuse } from "./errors.ts";
import type { HeaderValue } from "./http.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A header's value, or the first of a repeated header's values. */
export function first(value: HeaderValue): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** True for a Content-Type naming application/json (any parameters, any case). */
export function isJson(type: string | undefined): boolean {
  if (type === "application/json" || type === "application/json; charset=utf-8") return true; // the usual ones
  return type?.split(";", 1)[0]?.trim().toLowerCase() === "application/json";
}

/** Why the request's headers refuse its body (type, announced size), or undefined. */
export function refusedBody(headers: Readonly<Record<string, HeaderValue>>, maxBodyBytes: number): Refusal | undefined {
  if (!isJson(first(headers["content-type"]))) return refuse("unsupported_media_type");
  const declared = first(headers["content-length"]);
  if (declared !== undefined && /^[0-9]+$/.test(declared) && Number(declared) > maxBodyBytes) {
    return refuse("payload_too_large", `The request body must be at most ${maxBodyBytes} bytes.`);
  }
  return undefined;
}

/** The body's JSON value, or why it is refused (too large, not UTF-8, missing, not JSON). */
export function parseJson(
  raw: Uint8Array | string | null | undefined,
  maxBodyBytes: number,
): { value: unknown } | Refusal {
  let text: string;
  if (raw === undefined || raw === null) text = "";
  else if (typeof raw === "string") {
    if (Buffer.byteLength(raw) > maxBodyBytes) return refuse("payload_too_large");
    text = raw;
  } else {
    if (raw.byteLength > maxBodyBytes) return refuse("payload_too_large");
    try {
      text = utf8.decode(raw);
    } catch {
      return refuse("malformed_json", "The request body is not valid UTF-8 JSON.");
    }
  }
  try {
    return { value: JSON.parse(text) };
  } catch {
    if (text.trim() === "") return refuse("invalid_body", "The request body is missing: send a NewPet.");
    return refuse("malformed_json");
  }
}
