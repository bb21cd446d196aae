/**
 * The request body of a create, before it is a NewPet: what its headers say (type, announced
 * size) and what its bytes are (size, UTF-8, JSON). Every refusal is a contract answer.
 */
import { isDigits } from "./chars.ts";
import type { Refusal } from "./errors.ts";
import { refuse } from "./errors.ts";
import type { HeaderValue } from "./http.ts";
import { firstValue } from "./http.ts";
import { utf8Length } from "./json.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** True for a Content-Type naming application/json (any parameters, any case). */
export function isJson(type: string | undefined): boolean {
  if (type === "application/json" || type === "application/json; charset=utf-8") return true; // the usual ones
  return type?.split(";", 1)[0]?.trim().toLowerCase() === "application/json";
}

/** The one answer to a body over the limit, however it was found out. */
export function tooLarge(maxBodyBytes: number): Refusal {
  return refuse("payload_too_large", `The request body must be at most ${maxBodyBytes} bytes.`);
}

/** Why the request's headers refuse its body (type, announced size), or undefined. */
export function refusedBody(headers: Readonly<Record<string, HeaderValue>>, maxBodyBytes: number): Refusal | undefined {
  if (!isJson(firstValue(headers["content-type"]))) return refuse("unsupported_media_type");
  const declared = firstValue(headers["content-length"]);
  if (declared !== undefined && isDigits(declared) && Number(declared) > maxBodyBytes) {
    return tooLarge(maxBodyBytes);
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
    if (utf8Length(raw) > maxBodyBytes) return tooLarge(maxBodyBytes);
    text = raw;
  } else {
    if (raw.byteLength > maxBodyBytes) return tooLarge(maxBodyBytes);
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
