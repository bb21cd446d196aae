/**
 * The pages a SQLite store read last, each with the one text its statement answered (the served
 * texts joined: sqlite/reads.ts): the same text read again for the same page is the same pets, in
 * the same order, so they are handed out again (as copies) instead of being split, decoded and
 * checked once more. A page whose text changed is decoded as it is now, and kept instead.
 */
import type { Pet, PetStatus } from "../../schemas.ts";
import { makePageMap } from "../page-map.ts";
import { copyPet } from "../values.ts";

export interface KeptPages {
  /** Copies of the pets of this page when it was last read from the very same `text`; else undefined. */
  find(status: PetStatus | undefined, after: number, limit: number, text: string): Pet[] | undefined;
  /** Keeps the pets decoded from `text` for this page (copies: the caller may change its own). */
  keep(status: PetStatus | undefined, after: number, limit: number, text: string, pets: readonly Pet[]): void;
}

/** The kept pages of one store (../page-map.ts remembers them). */
export function makeKeptPages(): KeptPages {
  const known = makePageMap<PetStatus, { text: string; pets: readonly Pet[] }>();
  return {
    find(status, after, limit, text) {
      const kept = known.get(status, after, limit);
      if (kept === undefined || kept.value.text !== text) return undefined;
      return kept.value.pets.map(copyPet);
    },
    keep(status, after, limit, text, pets) {
      known.set(status, after, limit, { text, pets: pets.map(copyPet) });
    },
  };
}
