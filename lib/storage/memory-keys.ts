/**
 * The memory storage's idempotency records, kept small: a record is one Map entry (its key is a
 * short scope number and the idempotency key) and one slot of typed columns (pet id, expiry,
 * 32 bytes of fingerprint), about 150 bytes with a 36-character key. Slots are handed out in
 * creation order, which is expiry order when every record has the same time to live, so expired
 * records are swept from the oldest slot on, a bounded number per write.
 */

import { Buffer } from "node:buffer";

const FINGERPRINT_BYTES = 32;

export class MemoryKeys {
  /** Each scope seen, as a short number: a record's Map key then repeats a few digits, not the scope. */
  private readonly scopes = new Map<string, number>();
  /** `<scope number> <key>` to the absolute number of its slot. */
  private readonly slots = new Map<string, number>();
  private names: (string | undefined)[] = [];
  private petIds = new Float64Array(1024);
  private expires = new Float64Array(1024);
  private prints = Buffer.alloc(1024 * FINGERPRINT_BYTES);
  /** Absolute slot number of index 0 of the columns; of the oldest slot not swept; of the next slot. */
  private base = 0;
  private head = 0;
  private next = 0;

  /** Live records (expired ones not yet swept included). */
  get size(): number {
    return this.slots.size;
  }

  private name(scope: string, key: string, create: boolean): string | undefined {
    let n = this.scopes.get(scope);
    if (n === undefined) {
      if (!create) return undefined;
      n = this.scopes.size;
      this.scopes.set(scope, n);
    }
    return `${n} ${key}`;
  }

  /** The slot of the unexpired record of `scope` + `key`, or undefined. */
  find(scope: string, key: string, now: number): number | undefined {
    const name = this.name(scope, key, false);
    const slot = name === undefined ? undefined : this.slots.get(name);
    if (slot === undefined || (this.expires[slot - this.base] as number) <= now) return undefined;
    return slot;
  }

  /** True when the record in `slot` has this fingerprint (64 hex characters). */
  matches(slot: number, fingerprint: string): boolean {
    const at = (slot - this.base) * FINGERPRINT_BYTES;
    return this.prints.toString("hex", at, at + FINGERPRINT_BYTES) === fingerprint;
  }

  petId(slot: number): number {
    return this.petIds[slot - this.base] as number;
  }

  /** Records (or replaces) the key of `scope` + `key`. */
  add(scope: string, key: string, fingerprint: string, petId: number, expiresAt: number): void {
    const name = this.name(scope, key, true) as string;
    let i = this.next - this.base;
    if (i === this.petIds.length) {
      // Compacting when at least a quarter is swept keeps each slot's copies amortised O(1).
      if (this.head - this.base >= this.petIds.length / 4) this.compact();
      else this.grow();
      i = this.next - this.base;
    }
    this.names[i] = name;
    this.petIds[i] = petId;
    this.expires[i] = expiresAt;
    this.prints.write(fingerprint, i * FINGERPRINT_BYTES, FINGERPRINT_BYTES, "hex");
    this.slots.set(name, this.next++);
  }

  /** Removes up to `max` expired records, oldest first. */
  sweep(now: number, max: number): void {
    const end = Math.min(this.next, this.head + max);
    while (this.head < end) {
      const i = this.head - this.base;
      if ((this.expires[i] as number) > now) break;
      const name = this.names[i] as string;
      // A key used again after it expired has a newer slot: that one stays.
      if (this.slots.get(name) === this.head) this.slots.delete(name);
      this.names[i] = undefined;
      this.head++;
    }
    if (this.slots.size === 0) this.scopes.clear();
  }

  /** Moves the live slots to the front of the columns. */
  private compact(): void {
    const from = this.head - this.base;
    const live = this.next - this.head;
    this.names = this.names.slice(from, from + live);
    this.petIds.copyWithin(0, from, from + live);
    this.expires.copyWithin(0, from, from + live);
    this.prints.copyWithin(0, from * FINGERPRINT_BYTES, (from + live) * FINGERPRINT_BYTES);
    this.base = this.head;
  }

  private grow(): void {
    const length = this.petIds.length * 2;
    const petIds = new Float64Array(length);
    petIds.set(this.petIds);
    const expires = new Float64Array(length);
    expires.set(this.expires);
    const prints = Buffer.alloc(length * FINGERPRINT_BYTES);
    this.prints.copy(prints);
    this.petIds = petIds;
    this.expires = expires;
    this.prints = prints;
  }

  clear(): void {
    this.scopes.clear();
    this.slots.clear();
    this.names = [];
    this.base = this.head = this.next = 0;
  }
}
