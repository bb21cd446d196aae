/**
 * The embedded default: pet values in Keyv's memory store (a Map, values kept unserialised),
 * an in-process id sequence, and one sorted id index for all pets plus one per status, so a
 * page costs a binary search plus `limit` lookups whatever the size of the store.
 */
import Keyv from "keyv";
import type { Pet, PetStatus } from "../schemas.ts";
import type { ListPage, PetData, PetStorage } from "./port.ts";

/** A growable, sorted list of ids in a Float64Array: 8 bytes an id, no per-entry object. */
class IdIndex {
  private ids = new Float64Array(1024);
  size = 0;

  insert(id: number): void {
    if (this.size === this.ids.length) {
      const grown = new Float64Array(this.ids.length * 2);
      grown.set(this.ids);
      this.ids = grown;
    }
    // Ids are handed out in order, so this is an append unless two creates finished out of order.
    let i = this.size;
    while (i > 0 && (this.ids[i - 1] as number) > id) {
      this.ids[i] = this.ids[i - 1] as number;
      i--;
    }
    this.ids[i] = id;
    this.size++;
  }

  /** Up to `limit` ids greater than `after`, ascending. */
  page(after: number, limit: number): number[] {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.ids[mid] as number) <= after) lo = mid + 1;
      else hi = mid;
    }
    const end = Math.min(this.size, lo + limit);
    const out = new Array<number>(end - lo);
    for (let i = lo; i < end; i++) out[i - lo] = this.ids[i] as number;
    return out;
  }
}

export interface MemoryStorageOptions {
  /** Keyv namespace of the values (default "pets"). */
  namespace?: string;
}

/**
 * Keyv's store for the memory backend: a Map-like adapter over a dense array indexed by id.
 * Ids are 1..n within one process, so a slot lookup replaces hashing a string key among a
 * million: a page costs the same at 1,000 pets and at 1,000,000. Keys are decimal ids.
 */
class PetSlots {
  private slots: (Pet | undefined)[] = [];

  private static index(key: string): number {
    const i = Number(key);
    if (!Number.isSafeInteger(i) || i < 1) throw new TypeError(`memory storage: invalid key ${JSON.stringify(key)}`);
    return i;
  }

  /** The pet itself, without Keyv's envelope: the hot path of reads. */
  read(id: number): Pet | undefined {
    return this.slots[id];
  }

  get(key: string): { value: Pet } | undefined {
    const pet = this.slots[PetSlots.index(key)];
    return pet === undefined ? undefined : { value: pet };
  }

  set(key: string, data: { value: Pet }): boolean {
    this.slots[PetSlots.index(key)] = data.value;
    return true;
  }

  has(key: string): boolean {
    return this.slots[PetSlots.index(key)] !== undefined;
  }

  delete(key: string): boolean {
    const i = PetSlots.index(key);
    const had = this.slots[i] !== undefined;
    this.slots[i] = undefined;
    return had;
  }

  clear(): void {
    this.slots = [];
  }
}

/** In-process storage; nothing survives the process. @example createPetStore({ storage: memoryStorage(), auth }) */
export function memoryStorage(options: MemoryStorageOptions = {}): PetStorage {
  // Writes go through Keyv; reads look the slots up directly, which is what Keyv would do minus
  // one promise per key: a page of 20 is the hot path. Values are kept unserialised.
  const slots = new PetSlots();
  const values = new Keyv<Pet>({
    store: slots as unknown as Map<string, unknown>,
    namespace: options.namespace ?? "pets",
    useKeyPrefix: false,
    serialize: undefined,
    deserialize: undefined,
    throwOnErrors: true,
  });
  const all = new IdIndex();
  const byStatus: Record<PetStatus, IdIndex> = {
    available: new IdIndex(),
    pending: new IdIndex(),
    sold: new IdIndex(),
  };
  let lastId = 0;

  return {
    kind: "memory",
    inProcess: true,
    async create(data: PetData): Promise<Pet> {
      const id = ++lastId;
      // Frozen: the same object is handed out on every read (see PetStorage.inProcess).
      const pet: Pet = Object.freeze({ id, name: data.name, categoryId: data.categoryId, status: data.status });
      await values.set(String(id), pet);
      all.insert(id);
      byStatus[pet.status].insert(id);
      return pet;
    },
    // Reads answer synchronously: the core then builds the answer without a promise hop.
    get(id: number): Pet | undefined {
      return slots.read(id);
    },
    list({ status, after, limit }: ListPage): Pet[] {
      const ids = (status === undefined ? all : byStatus[status]).page(after, limit);
      const pets: Pet[] = [];
      for (const id of ids) {
        const pet = slots.read(id);
        if (pet !== undefined) pets.push(pet);
      }
      return pets;
    },
    async ping() {},
    async close() {
      await values.disconnect();
    },
  };
}
