/**
 * Character checks of the hot path. Short strings that come whole (a header name, a
 * Content-Length) are read by a loop, which inlines where it is called; text that is often a slice
 * or a concatenation (a path, a name, a principal) by a regular expression, since a loop of
 * `charCodeAt` reads such a string slowly and the engine's matcher reads it whole
 * (bench/README.md, "Instructions a request").
 */

/** Printable ASCII but `"` and `\`: one UTF-8 byte each, nothing JSON escapes. */
const PLAIN_JSON = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** True when `s` has a character from A to Z. */
export function hasUpperCase(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 65 && c <= 90) return true;
  }
  return false;
}

/** True when `s` is one or more of the digits 0 to 9, nothing else. */
export function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** True when every character of `s` is one UTF-8 byte needing no JSON escape: printable ASCII but `"` and `\`. */
export function isPlainJson(s: string): boolean {
  return PLAIN_JSON.test(s);
}
