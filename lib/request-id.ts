/**
 * New request ids: random UUIDs (version 4, RFC 9562), as `crypto.randomUUID()` writes them, at
 * about half its cost on this hot path (every request that brings no id of its own). The random
 * bytes come from Web Crypto's `getRandomValues` (Node, Bun, Deno and Workers alike) 64 KiB at a
 * time, 4,096 ids a call where Node's `randomUUID` fills 2 KiB; the text is written as character
 * codes into one array, made one flat string by one call.
 */

const IDS = 4096;
const pool = new Uint8Array(IDS * 16); // 65,536 bytes: the most one getRandomValues call fills
let next = IDS;
const DIGITS = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
/** Where each of the 16 bytes' two digits go in xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx. */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
const codes: number[] = new Array<number>(36).fill(0x2d); // "-" where no digit goes

/** A new random UUID (version 4). */
export function newRequestId(): string {
  if (next === IDS) {
    globalThis.crypto.getRandomValues(pool);
    next = 0;
  }
  const o = next++ * 16;
  for (let i = 0; i < 16; i++) {
    let v = pool[o + i] as number;
    if (i === 6)
      v = (v & 0x0f) | 0x40; // version 4
    else if (i === 8) v = (v & 0x3f) | 0x80; // variant 10
    const p = AT[i] as number;
    codes[p] = DIGITS[v >> 4] as number;
    codes[p + 1] = DIGITS[v & 15] as number;
  }
  return String.fromCharCode.apply(null, codes);
}
