/**
 * The memory storage's idempotency records, kept small: a record is one entry in its scope's Map
 * (the caller's own key string) and one slot of typed columns (scope number, pet id, expiry, 32
 * bytes of fingerprint), under 200 bytes with a 36-character key (bench M2). Slots go in creation
 * order, which is expiry order when all records live as long: each write sweeps a bounded number
 * of expired records, oldest first.
 */

import type { KeyRecord } from "../port.ts";

const FINGERPRINT_BYTES = 32;
/** Matches every string: see `add`. */
const ANY = /^/;

/** The value of a lower-case hex digit's character code (as fingerprints are written); -1 for any other. */
function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  return code >= 97 && code <= 102 ? code - 87 : -1;
}

export class MemoryKeys {
  /** Each scope seen, as a number, and its keys (key → absolute number of its slot). */
  private readonly scopes = new Map<string, number>();
  private scopeKeys: Map<string, number>[] = [];
  private count = 0;
  /** Per slot: the key, and the number of its scope. */
  private names: (string | undefined)[] = [];
  private scopeOf = new Int32Array(1024);
  private petIds = new Float64Array(1024);
  private expires = new Float64Array(1024);
  private prints = new Uint8Array(1024 * FINGERPRINT_BYTES);
  /** Absolute slot number of index 0 of the columns; of the oldest slot not swept; of the next slot. */
  private base = 0;
  private head = 0;
  private next = 0;

  /** Live records (expired ones not yet swept included). */
  get size(): number {
    return this.count;
  }

  /** The number of a scope that has keys. */
  private scopeNumber(scope: string): number | undefined {
    return this.scopes.get(scope);
  }

  /** Gives a new scope its number. */
  private addScope(scope: string): number {
    const scopeIndex = this.scopeKeys.length;
    this.scopes.set(scope, scopeIndex);
    this.scopeKeys.push(new Map());
    return scopeIndex;
  }

  /** The slot of the unexpired record of `scope` + `key`, or undefined. */
  find(scope: string, key: string, now: number): number | undefined {
    const scopeIndex = this.scopeNumber(scope);
    const slot = scopeIndex === undefined ? undefined : this.scopeKeys[scopeIndex]?.get(key);
    if (slot === undefined || (this.expires[slot - this.base] as number) <= now) return undefined;
    return slot;
  }

  /** True when the record in `slot` has this fingerprint (64 hex characters). */
  matches(slot: number, fingerprint: string): boolean {
    if (fingerprint.length !== FINGERPRINT_BYTES * 2) return false;
    const at = (slot - this.base) * FINGERPRINT_BYTES;
    for (let i = 0; i < FINGERPRINT_BYTES; i++) {
      const byte = (hexValue(fingerprint.charCodeAt(2 * i)) << 4) | hexValue(fingerprint.charCodeAt(2 * i + 1));
      if (byte !== this.prints[at + i]) return false;
    }
    return true;
  }

  petId(slot: number): number {
    return this.petIds[slot - this.base] as number;
  }

  /** Records (or replaces) the key of `scope` + `key`. */
  add(scope: string, key: string, fingerprint: string, petId: number, expiresAt: number): void {
    // A key made by concatenation (crypto.randomUUID's) is kept whole once matched (bench M2).
    ANY.test(key);
    const scopeIndex = this.scopeNumber(scope) ?? this.addScope(scope);
    const keys = this.scopeKeys[scopeIndex] as Map<string, number>;
    let i = this.next - this.base;
    if (i === this.petIds.length) {
      // Compacting when at least a quarter is swept keeps each slot's copies amortised O(1).
      if (this.head - this.base >= this.petIds.length / 4) this.compact();
      else this.grow();
      i = this.next - this.base;
    }
    this.names[i] = key;
    this.scopeOf[i] = scopeIndex;
    this.petIds[i] = petId;
    this.expires[i] = expiresAt;
    this.writePrint(i * FINGERPRINT_BYTES, fingerprint);
    if (!keys.has(key)) this.count++;
    keys.set(key, this.next++);
  }

  /** The unexpired record of `scope` + `key` as a KeyRecord, or undefined. */
  record(scope: string, key: string, now: number): KeyRecord | undefined {
    const slot = this.find(scope, key, now);
    return slot === undefined ? undefined : this.recordAt(slot, scope, key);
  }

  /** The record in `slot`, of `scope` + `key`. */
  private recordAt(slot: number, scope: string, key: string): KeyRecord {
    const i = slot - this.base;
    const print = this.prints.subarray(i * FINGERPRINT_BYTES, (i + 1) * FINGERPRINT_BYTES);
    const fingerprint = Array.from(print, (byte) => byte.toString(16).padStart(2, "0")).join("");
    return { scope, key, fingerprint, petId: this.petIds[i] as number, expiresAt: this.expires[i] as number };
  }

  /** Every unexpired record (`expiresAt` after `now`), scope by scope. */
  live(now: number): KeyRecord[] {
    const records: KeyRecord[] = [];
    const scopeNames = [...this.scopes.keys()]; // in the order of their numbers
    for (let s = 0; s < this.scopeKeys.length; s++) {
      for (const [key, slot] of this.scopeKeys[s] as Map<string, number>) {
        if ((this.expires[slot - this.base] as number) > now)
          records.push(this.recordAt(slot, scopeNames[s] as string, key));
      }
    }
    return records;
  }

  /** Writes a fingerprint's 64 hex characters as 32 bytes from `at`. */
  private writePrint(at: number, fingerprint: string): void {
    for (let i = 0; i < FINGERPRINT_BYTES; i++) {
      const byte = (hexValue(fingerprint.charCodeAt(2 * i)) << 4) | hexValue(fingerprint.charCodeAt(2 * i + 1));
      this.prints[at + i] = Math.max(byte, 0);
    }
  }

  /** Removes up to `max` expired records, oldest first. */
  sweep(now: number, max: number): void {
    const end = Math.min(this.next, this.head + max);
    while (this.head < end) {
      const i = this.head - this.base;
      if ((this.expires[i] as number) > now) break;
      const key = this.names[i] as string;
      const keys = this.scopeKeys[this.scopeOf[i] as number] as Map<string, number>;
      // A key used again after it expired has a newer slot: that one stays.
      if (keys.get(key) === this.head) {
        keys.delete(key);
        this.count--;
      }
      this.names[i] = undefined;
      this.head++;
    }
    if (this.count === 0 && this.scopes.size > 0) {
      this.scopes.clear();
      this.scopeKeys = [];
    }
  }

  /** Moves the live slots to the front of the columns. */
  private compact(): void {
    const from = this.head - this.base;
    const live = this.next - this.head;
    this.names = this.names.slice(from, from + live);
    this.scopeOf.copyWithin(0, from, from + live);
    this.petIds.copyWithin(0, from, from + live);
    this.expires.copyWithin(0, from, from + live);
    this.prints.copyWithin(0, from * FINGERPRINT_BYTES, (from + live) * FINGERPRINT_BYTES);
    this.base = this.head;
  }

  private grow(): void {
    const length = this.petIds.length * 2;
    const scopeOf = new Int32Array(length);
    scopeOf.set(this.scopeOf);
    this.scopeOf = scopeOf;
    const petIds = new Float64Array(length);
    petIds.set(this.petIds);
    const expires = new Float64Array(length);
    expires.set(this.expires);
    const prints = new Uint8Array(length * FINGERPRINT_BYTES);
    prints.set(this.prints);
    this.petIds = petIds;
    this.expires = expires;
    this.prints = prints;
  }

  clear(): void {
    this.scopes.clear();
    this.scopeKeys = [];
    this.count = 0;
    this.names = [];
    this.base = this.head = this.next = 0;
  }
}
