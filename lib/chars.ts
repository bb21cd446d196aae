/**
 * Character checks of the hot path, written as loops: on the short strings they see (header
 * names, a Content-Length, a pet's name) a loop inlines where it is called, where a regular
 * expression is a call into its engine each time (bench/README.md, H3).
 */

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
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}
