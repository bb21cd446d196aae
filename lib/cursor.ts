/**
 * Opaque pagination cursors. A cursor names the last id of the page it follows and the
 * status filter it was issued for, with a check value so that strings the service did not
 * issue are refused (`400 invalid_query`). It carries no secret: any process sharing the
 * same storage accepts the cursors of the others.
 */
import type { PetStatus } from "./schemas.ts";
import { MAX_ID } from "./schemas.ts";

const STATUS_CODE: Record<string, string> = { "": "a", available: "v", pending: "p", sold: "s" };

/** FNV-1a, 32 bits, of the characters of `text`, going on from `hash` (the hash of what came before it). */
function fnv(text: string, hash = 0x811c9dc5): number {
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** FNV-1a of "petstore:", where every check value's hash goes on from (the payload is read alone, not a copy joined to it). */
const PREFIX_HASH = fnv("petstore:");

/** The check value of a cursor's payload: FNV-1a of "petstore:" + payload on 7 base-36 digits, enough to tell a cursor from a typo. */
function check(payload: string): string {
  return fnv(payload, PREFIX_HASH).toString(36).padStart(7, "0");
}

export function encodeCursor(lastId: number, status: PetStatus | undefined): string {
  const payload = `${STATUS_CODE[status ?? ""]}${lastId.toString(36)}`;
  return payload + check(payload);
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
