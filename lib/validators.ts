/**
 * Validators (RFC 9110 §8.8.3): strong entity tags derived from the stored data alone, so every
 * process, worker, backend and adapter gives a pet or a page the same tag; and the check of
 * `If-None-Match` (§13.1.2, weak comparison). A pet's digest is kept beside its JSON text
 * (lib/json.ts); a page's tag mixes its pets' digests with what its `Link` says, so a `304` is
 * decided without writing the page. No `Last-Modified`: the contract keeps no time of a pet.
 */
import type { HeaderValue } from "./http.ts";
import type { PetJson, PetText } from "./json.ts";
import type { PetPage } from "./operations.ts";
import type { Pet } from "./schemas.ts";

/** A representation's strong tag, quoted (`"0f3a…"`), and the length of its 200's body in UTF-8 bytes. */
export interface Validator {
  etag: string;
  bytes: number;
}

/** Two hex digits of each byte value. */
const HEX_BYTES = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Eight hex digits of a 32-bit value. */
function hex8(n: number): string {
  const at = (shift: number) => HEX_BYTES[(n >>> shift) & 0xff] as string;
  return at(24) + at(16) + at(8) + at(0);
}

/** Two 32-bit lanes mixed into each other (the finaliser of cyrb53, public domain): every input bit moves every output bit. */
function finish(h1: number, h2: number, into: { h1: number; h2: number }): void {
  let a = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  a ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  let b = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  b ^= Math.imul(a ^ (a >>> 13), 3266489909);
  into.h1 = a | 0;
  into.h2 = b | 0;
}

/**
 * Fills in a pet's digest: 64 bits of its JSON text (which is made of all its fields), once per
 * kept text. Not a cryptographic hash: a tag only has to change when the pet does.
 */
function digest(entry: PetText): void {
  const text = entry.text;
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  finish(h1, h2, entry);
  // (0, 0) means "not yet": a digest that lands there is moved off it.
  if (entry.h1 === 0 && entry.h2 === 0) entry.h1 = 1;
}

/** The pet's kept text with its digest. */
function digested(json: PetJson, pet: Pet): PetText {
  const entry = json.entry(pet);
  if (entry.h1 === 0 && entry.h2 === 0) digest(entry);
  return entry;
}

/** The tag of one pet (`getPet`) and its text, kept together: a pet never changes. */
export function petValidator(json: PetJson, pet: Pet): { entry: PetText; etag: string } {
  const entry = digested(json, pet);
  entry.etag ??= `"${hex8(entry.h1)}${hex8(entry.h2)}"`;
  return { entry, etag: entry.etag };
}

const STATUS_CODES: Record<string, number> = { available: 1, pending: 2, sold: 3 };

/** A page's validator, and its pets' kept texts in order: what its body is joined from (`PetJson.join`). */
export interface PageValidator extends Validator {
  entries: PetText[];
}

/**
 * The tag of a page and its body's length, from its pets' digests and what its `Link` holds (the
 * limit, the filter, whether a next page follows): a last page that fills, or gains a next page,
 * gets a new tag. Its text is not written.
 */
export function pageValidator(json: PetJson, page: PetPage): PageValidator {
  const { pets } = page;
  const next = page.nextCursor === undefined ? 0 : 1;
  let h1 = Math.imul(0x9e3779b9 ^ page.limit, 2654435761);
  let h2 = Math.imul(0x85ebca6b ^ ((STATUS_CODES[page.status ?? ""] ?? 0) * 2 + next), 1597334677);
  // "[" and "]", and a comma between two pets.
  let bytes = pets.length === 0 ? 2 : pets.length + 1;
  const entries = new Array<PetText>(pets.length);
  for (let i = 0; i < pets.length; i++) {
    const entry = digested(json, pets[i] as Pet);
    entries[i] = entry;
    h1 = Math.imul(h1 ^ entry.h1, 2654435761);
    h2 = Math.imul(h2 ^ entry.h2, 1597334677);
    bytes += entry.text.length + entry.extra;
  }
  const tag = { h1: 0, h2: 0 };
  finish(h1 ^ pets.length, h2, tag);
  return { etag: `"${hex8(tag.h1)}${hex8(tag.h2)}"`, bytes, entries };
}

/** Optional white space and the commas between list members. */
function isSeparator(c: number): boolean {
  return c === 32 || c === 9 || c === 44;
}

/**
 * True when `If-None-Match` holds `*` or names `etag` (weak comparison: `W/"x"` names `"x"`),
 * so that the answer is `304 Not Modified`. A malformed list stops at its first bad member: what
 * came before it counts, nothing after it does (so a bad header never wins a 304 it should not).
 *
 * @example isNotModified('W/"a", "b"', '"a"') // true
 */
export function isNotModified(ifNoneMatch: HeaderValue, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const header = typeof ifNoneMatch === "string" ? ifNoneMatch : ifNoneMatch.join(",");
  let i = 0;
  while (i < header.length && isSeparator(header.charCodeAt(i))) i++;
  if (header.charCodeAt(i) === 42 /* * */) {
    for (let j = i + 1; j < header.length; j++) if (!isSeparator(header.charCodeAt(j))) return false;
    return true;
  }
  for (;;) {
    while (i < header.length && isSeparator(header.charCodeAt(i))) i++;
    if (i >= header.length) return false;
    if (header.charCodeAt(i) === 87 /* W */ && header.charCodeAt(i + 1) === 47 /* / */) i += 2;
    if (header.charCodeAt(i) !== 34 /* " */) return false;
    const end = header.indexOf('"', i + 1);
    if (end === -1) return false;
    if (end + 1 - i === etag.length && header.startsWith(etag, i)) return true;
    i = end + 1;
  }
}
