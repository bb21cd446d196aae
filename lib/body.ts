/**
 * The request body of a create, before it is a NewPet: what its headers say (type, charset,
 * encoding, announced size) and what its bytes are (size, UTF-8, JSON, I-JSON's unique member
 * names). Every refusal is a contract answer.
 */
import { isDigits } from "./chars.ts";
import type { Refusal } from "./errors.ts";
import { refuse } from "./errors.ts";
import type { HeaderValue } from "./http.ts";
import { firstValue } from "./http.ts";
import { quote } from "./quote.ts";
import { utf8Length } from "./text.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** True for a Content-Type naming application/json (any parameters, any case). */
export function isJson(type: string | undefined): boolean {
  if (type === "application/json" || type === "application/json; charset=utf-8") return true; // the usual ones
  return type?.split(";", 1)[0]?.trim().toLowerCase() === "application/json";
}

/** True when every `charset` parameter of a Content-Type says UTF-8 (any case, quoted or not), or there is none. */
export function isUtf8(type: string): boolean {
  const parameters = type.split(";");
  for (let i = 1; i < parameters.length; i++) {
    const parameter = parameters[i] as string;
    const equals = parameter.indexOf("=");
    if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== "charset") continue;
    let value = parameter.slice(equals + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (value.toLowerCase() !== "utf-8") return false;
  }
  return true;
}

/** True when a Content-Encoding header names no coding but `identity` (any case), or is absent. */
export function isIdentity(encoding: HeaderValue): boolean {
  if (encoding === undefined) return true;
  for (const value of Array.isArray(encoding) ? encoding : [encoding]) {
    for (const coding of value.split(",")) {
      const name = coding.trim().toLowerCase();
      if (name !== "" && name !== "identity") return false;
    }
  }
  return true;
}

/** The one answer to a body over the limit, however it was found out. */
export function tooLarge(maxBodyBytes: number): Refusal {
  return refuse("payload_too_large", `The request body must be at most ${maxBodyBytes} bytes.`);
}

/** Why the request's headers refuse its body (type, charset, encoding, announced size), or undefined. */
export function refusedBody(headers: Readonly<Record<string, HeaderValue>>, maxBodyBytes: number): Refusal | undefined {
  const type = firstValue(headers["content-type"]);
  if (type !== "application/json" && type !== "application/json; charset=utf-8") {
    if (type === undefined || !isJson(type)) return refuse("unsupported_media_type");
    if (!isUtf8(type)) {
      return refuse("unsupported_media_type", "The request body must be encoded as UTF-8 (charset=utf-8).");
    }
  }
  if (!isIdentity(headers["content-encoding"])) {
    return refuse("unsupported_media_type", "The request body must not be compressed (Content-Encoding: identity).");
  }
  const declared = firstValue(headers["content-length"]);
  if (declared !== undefined && isDigits(declared) && Number(declared) > maxBodyBytes) {
    return tooLarge(maxBodyBytes);
  }
  return undefined;
}

/** The body's JSON value, or why it is refused (too large, not UTF-8, missing, not JSON, a repeated member). */
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
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (text.trim() === "") return refuse("invalid_body", "The request body is missing: send a NewPet.");
    return refuse("malformed_json");
  }
  const repeated = repeatedMember(text, value);
  if (repeated !== undefined) {
    return refuse("malformed_json", `The request body repeats the member ${quote(repeated)}.`);
  }
  return { value };
}

/**
 * The first member name an object of the JSON `text` repeats (I-JSON, RFC 7493), or undefined;
 * `value` is `JSON.parse(text)`. JSON.parse keeps one member per name, so the text has a repeated
 * name only when it holds more `:` than the parsed objects hold keys: the text is scanned only then.
 */
export function repeatedMember(text: string, value: unknown): string | undefined {
  let colons = 0;
  for (let at = text.indexOf(":"); at !== -1; at = text.indexOf(":", at + 1)) colons++;
  if (colons === 0 || countKeys(value, colons) >= colons) return undefined;
  return scanForRepeatedMember(text);
}

/** The keys of every object in `value`, counted without recursion (30,000 levels must not overflow), up to `enough`. */
function countKeys(value: unknown, enough: number): number {
  let keys = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && keys < enough) {
    const next = pending.pop();
    if (typeof next !== "object" || next === null) continue;
    if (Array.isArray(next)) {
      for (const item of next) if (typeof item === "object" && item !== null) pending.push(item);
      continue;
    }
    for (const key of Object.keys(next)) {
      keys++;
      const member = (next as Record<string, unknown>)[key];
      if (typeof member === "object" && member !== null) pending.push(member);
    }
  }
  return keys;
}

/**
 * The first repeated member name of a valid JSON `text`, in text order, or undefined: a scan that
 * keeps the names seen in each open object (escapes decoded: `"\u0061"` is `"a"`).
 */
export function scanForRepeatedMember(text: string): string | undefined {
  // One entry per open object or array: the names seen so far, or null for an array.
  const open: (Set<string> | null)[] = [];
  let expectName = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22 /* " */) {
      const start = i;
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c /* \ */) i++;
      if (!expectName) continue;
      expectName = false;
      const names = open[open.length - 1] as Set<string>;
      const name = JSON.parse(text.slice(start, i + 1)) as string;
      if (names.has(name)) return name;
      names.add(name);
    } else if (code === 0x7b /* { */) {
      open.push(new Set());
      expectName = true;
    } else if (code === 0x5b /* [ */) {
      open.push(null);
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      open.pop();
      expectName = false;
    } else if (code === 0x2c /* , */) {
      expectName = open[open.length - 1] instanceof Set;
    }
  }
  return undefined;
}
