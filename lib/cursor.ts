/**
 * Opaque pagination cursors. A cursor names the last id of the page it follows and the
 * status filter it was issued for, with a check value so that strings the service did not
 * issue are refused (`400 invalid_query`). It carries no secret: any process sharing the
 * same storage accepts the cursors of the others.
 */
import type { PetStatus } from "./schemas.ts";
import { MAX_ID } from "./schemas.ts";

const STATUS_CODE: Record<string, string> = { "": "a", available: "v", pending: "p", sold: "s" };

/** FNV-1a, 32 bits, continued from `h` over the characters of `s`. */
function fnv(h: number, s: string): number {
  // Kept a signed 32-bit integer in the loop (the same bits), made unsigned once at the end.
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The hash state after "petstore:": every check value starts there. */
const SEEDED = fnv(0x811c9dc5, "petstore:");

/** Character codes of the base-36 digits 0-9a-z. */
const DIGIT = Array.from("0123456789abcdefghijklmnopqrstuvwxyz", (c) => c.charCodeAt(0));

/**
 * `n` (an unsigned 32-bit integer) in base 36 on 7 digits, as `n.toString(36).padStart(7, "0")`
 * writes it (36^7 > 2^32). By hand: `toString(36)` takes a slow path for half of all values
 * (those of 2^31 or more are not small integers), which made a page's cost depend on its cursor.
 * After the first division the rest fits 31 bits, so integer arithmetic does the other six.
 */
export function base36x7(n: number): string {
  const top = Math.floor(n / 36);
  const d6 = n - top * 36;
  let m = top | 0;
  const codes = [0, 0, 0, 0, 0, 0, DIGIT[d6] as number];
  for (let i = 5; i >= 0; i--) {
    const q = (m / 36) | 0;
    codes[i] = DIGIT[m - q * 36] as number;
    m = q;
  }
  return String.fromCharCode(...codes);
}

/**
 * FNV-1a of "petstore:" + payload, 32 bits, as 7 base-36 characters: enough to tell a cursor
 * from a typo. Computed without joining the strings: a joined string of 13 characters or more is
 * a rope, which reading character by character makes several times slower.
 */
function check(payload: string): string {
  return base36x7(fnv(SEEDED, payload));
}

/** The last cursor made, and what it was made from: the polled first page asks for the same one each time. */
let lastCursor = { id: -1, status: "", cursor: "" };

export function encodeCursor(lastId: number, status: PetStatus | undefined): string {
  const code = STATUS_CODE[status ?? ""] as string;
  if (lastCursor.id === lastId && lastCursor.status === code) return lastCursor.cursor;
  const payload = `${code}${lastId.toString(36)}`;
  // Flat: the cursor is written into the Link header, which Node checks with a regular expression.
  const cursor = payload + check(payload);
  cursor.charCodeAt(0);
  lastCursor = { id: lastId, status: code, cursor };
  return cursor;
}

/**
 * The last id a cursor names, or undefined when the cursor was not issued by this service
 * or was issued for another status filter.
 */
export function decodeCursor(cursor: string, status: PetStatus | undefined): number | undefined {
  if (cursor.length < 9 || cursor.length > 32 || !/^[apsv][0-9a-z]+$/.test(cursor)) return undefined;
  const payload = cursor.slice(0, -7);
  if (check(payload) !== cursor.slice(-7)) return undefined;
  if (payload[0] !== STATUS_CODE[status ?? ""]) return undefined;
  const id = Number.parseInt(payload.slice(1), 36);
  return Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID ? id : undefined;
}
