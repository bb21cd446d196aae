/**
 * Strings as the wire sees them: their length in UTF-8 bytes, and one flat piece for a string
 * built by `+` that is kept or written many times. Imports nothing, so any file may use it.
 */

/**
 * `s` as one flat string, in place: a string built by `+` is kept as its pieces until something
 * reads it whole, and one written many times (or kept apart from its parent) is better flat.
 */
export function flat(s: string): string {
  s.charCodeAt(0); // reading a character flattens it
  return s;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII includes the control characters
const ASCII = /^[\x00-\x7f]*$/;

/** The length of `s` in UTF-8 bytes (a lone surrogate counts 3, as an encoder writes U+FFFD). */
export function utf8Length(s: string): number {
  if (ASCII.test(s)) return s.length;
  let bytes = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a pair: two units, four bytes
      i++;
    } else bytes += 2;
  }
  return bytes;
}
