/**
 * Client input as an error answer shows it (a field name, a member name, a value): cut to 64
 * characters with "…", so that no input, however long, makes an error answer large. The Error
 * bodies that carry such input also bound how many `details` they list (MAX_ERROR_BYTES).
 */
import type { ErrorDetail } from "./errors.ts";
import { flat, utf8Length } from "./text.ts";

/** The most characters (code points) of client input an error shows. */
export const QUOTED_CHARACTERS = 64;

/** The most bytes an Error body takes, whatever the input. */
export const MAX_ERROR_BYTES = 4096;

/** What the details of one answer may take, leaving room for its code, message prefix and status. */
const DETAILS_BUDGET = 3000;

/**
 * `text` cut to 64 characters (never inside a surrogate pair) with "…" appended, or `text` when it
 * is not longer. A cut text is flat, never a slice: a slice keeps its whole parent alive.
 *
 * @example cut("x".repeat(100)) // 64 "x", then "…"
 */
export function cut(text: string): string {
  if (text.length <= QUOTED_CHARACTERS) return text;
  let end = 0;
  for (let count = 0; count < QUOTED_CHARACTERS && end < text.length; count++) {
    const code = text.charCodeAt(end);
    const low = text.charCodeAt(end + 1);
    end += code >= 0xd800 && code <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? 2 : 1;
  }
  if (end >= text.length) return text;
  return flat(`${text.slice(0, end)}…`);
}

/** `text` cut (see `cut`) and written as a JSON string, quotes included: `quote("name")` is `"name"`. */
export function quote(text: string): string {
  return JSON.stringify(cut(text));
}

/**
 * The first of `details` (each path cut) that fit the answer's budget, at least one: a body with
 * thousands of unknown fields lists the first few, and says how many it left out.
 */
export function boundedDetails(details: readonly ErrorDetail[]): { shown: ErrorDetail[]; omitted: number } {
  const shown: ErrorDetail[] = [];
  let bytes = 0;
  for (const detail of details) {
    const path = cut(detail.path);
    // Twice: the detail itself, and its words in the message; escapes may take six bytes a character.
    bytes += 2 * (6 * path.length + utf8Length(detail.message) + 32);
    if (shown.length > 0 && bytes > DETAILS_BUDGET) break;
    shown.push({ path, message: detail.message });
  }
  return { shown, omitted: details.length - shown.length };
}
