/**
 * The pages a SQLite store read last, each with the one text its statement answered (the served
 * texts joined: sqlite/reads.ts): the same text read again for the same page is the same pets, in
 * the same order, so they are handed out again (as copies) instead of being split, decoded and
 * checked once more. A page whose text changed is decoded as it is now, and kept instead.
 */
import type { Pet, PetStatus } from "../../schemas.ts";

/** Pages remembered per store; past this, forgotten all at once (a walk of a large store asks each page once). */
const REMEMBERED = 256;

/** A page as it was read: its limit, its statement's text, and the pets decoded from it. */
interface Kept {
  limit: number;
  text: string;
  pets: readonly Pet[];
}

export interface KeptPages {
  /** Copies of the pets of this page when it was last read from the very same `text`; else undefined. */
  find(status: PetStatus | undefined, after: number, limit: number, text: string): Pet[] | undefined;
  /** Keeps the pets decoded from `text` for this page (copies: the caller may change its own). */
  keep(status: PetStatus | undefined, after: number, limit: number, text: string, pets: readonly Pet[]): void;
}

const copyOf = (pet: Pet): Pet => ({ id: pet.id, name: pet.name, categoryId: pet.categoryId, status: pet.status });

/** The kept pages of one store, found by filter, then cursor, then limit. */
export function makeKeptPages(): KeptPages {
  const known = new Map<PetStatus | undefined, Map<number, Kept>>();
  let size = 0;
  return {
    find(status, after, limit, text) {
      const kept = known.get(status)?.get(after);
      if (kept === undefined || kept.limit !== limit || kept.text !== text) return undefined;
      return kept.pets.map(copyOf);
    },
    keep(status, after, limit, text, pets) {
      if (size >= REMEMBERED) {
        known.clear();
        size = 0;
      }
      let pages = known.get(status);
      if (pages === undefined) {
        pages = new Map();
        known.set(status, pages);
      }
      if (!pages.has(after)) size++;
      pages.set(after, { limit, text, pets: pets.map(copyOf) });
    },
  };
}
