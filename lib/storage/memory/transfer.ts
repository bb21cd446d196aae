/**
 * The memory storage's side of moving data (export, import): its pets are read with `list`; here
 * the sequence, the key records, and writes at given ids, each one synchronous step.
 */
import type { Pet } from "../../schemas.ts";
import type { KeyRecord, StorageTransfer } from "../port.ts";
import { freshKeys, missingPets } from "../transfer-checks.ts";
import type { MemoryKeys } from "./keys.ts";

/** What the transfer reaches of a memory store. */
export interface MemoryParts {
  /** The pet with this id, or undefined. */
  read(id: number): Pet | undefined;
  /** Stores a pet at its own id (table and status index). */
  write(pet: Pet): void;
  keys: MemoryKeys;
  /** The store's sequence: the last id taken. */
  sequence: { last: number };
}

/**
 * How far above the highest id stored an imported pet may lie: the table keeps columns indexed by
 * id, so a gap costs memory as pets would (about 17 bytes an id).
 */
export const MAX_ID_GAP = 1 << 20;

/** The transfer calls of a memory store made of `parts`. */
export function makeMemoryTransfer({ read, write, keys, sequence }: MemoryParts): StorageTransfer {
  return {
    async nextId() {
      return sequence.last + 1;
    },
    async *keys(now: number) {
      yield keys.live(now);
    },
    async putPets(pets: readonly Pet[]) {
      let top = sequence.last;
      for (const pet of pets) {
        if (pet.id > top + MAX_ID_GAP) {
          throw new Error(
            `memory storage: pet ${pet.id} lies more than ${MAX_ID_GAP} ids above the last one stored (${top}); memory keeps pets in columns by id`,
          );
        }
        top = Math.max(top, pet.id);
      }
      const batch = missingPets(pets, (pet) => read(pet.id));
      if ("conflict" in batch) return batch;
      const { missing } = batch;
      for (const pet of missing) write(pet);
      for (const pet of pets) sequence.last = Math.max(sequence.last, pet.id);
      return { written: missing.length };
    },
    async advanceIds(next: number) {
      if (next - 1 > sequence.last + MAX_ID_GAP) {
        throw new Error(
          `memory storage: the next id cannot move more than ${MAX_ID_GAP} past the last one (${sequence.last}); memory keeps pets in columns by id`,
        );
      }
      sequence.last = Math.max(sequence.last, next - 1);
    },
    async putKeys(records: readonly KeyRecord[], now: number) {
      const batch = freshKeys(records, ({ scope, key }) => keys.record(scope, key, now));
      if ("conflict" in batch) return batch;
      const { fresh } = batch;
      for (const { scope, key, fingerprint, petId, expiresAt } of fresh)
        keys.add(scope, key, fingerprint, petId, expiresAt);
      return { written: fresh.length };
    },
  };
}
