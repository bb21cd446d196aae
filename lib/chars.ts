/**
 * Character checks of the hot path, as regular expressions: the strings they see are often slices
 * or concatenations, which a loop of `charCodeAt` reads slowly and the engine's matcher reads
 * whole (bench/README.md, "Instructions a request").
 */

const UPPER = /[A-Z]/;
const DIGITS = /^[0-9]+$/;
/** Printable ASCII but `"` and `\`: one UTF-8 byte each, nothing JSON escapes. */
const PLAIN_JSON = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** True when `s` has a character from A to Z. */
export function hasUpperCase(s: string): boolean {
  return UPPER.test(s);
}

/** True when `s` is one or more of the digits 0 to 9, nothing else. */
export function isDigits(s: string): boolean {
  return DIGITS.test(s);
}

/** True when every character of `s` is one UTF-8 byte needing no JSON escape: printable ASCII but `"` and `\`. */
export function isPlainJson(s: string): boolean {
  return PLAIN_JSON.test(s);
}
