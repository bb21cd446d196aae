/**
 * Text from outside (a path, a quoted line of an input) as the commands print it: control
 * characters (C0, DEL, C1), line and paragraph separators and the bidirectional controls written as
 * `\uXXXX`, so that a name can neither move the terminal's cursor nor reorder what follows it.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters escaped
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` with its unprintable characters escaped. @example printable("a\u202eb") === "a\\u202eb" */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
