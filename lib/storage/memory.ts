/**
 * The embedded default: pet values in Keyv's memory store (a Map, values kept unserialised),
 * an in-process id sequence, and one sorted index for all pets plus one per status (columns of
 * the same values), so a page costs a binary search and a copy whatever the size of the store.
 */
import Keyv from "keyv";
import type { Pet, PetStatus } from "../schemas.ts";
import { PET_STATUSES } from "../schemas.ts";
import type { ListPage, PetData, PetStorage } from "./port.ts";

/**
 * A growable list of pets sorted by id, kept in columns: ids, category ids and statuses in typed
 * arrays, names in an array of strings. No per-entry object, and a page reads one contiguous run
 * of each column: it costs the same whether the pets it holds lie next to each other or a
 * million apart, where reading the stored objects would touch a cold cache line a pet.
 */
class PetIndex {
  /** The status every pet here has (an index of one status), or undefined (the index of all). */
  constructor(private readonly only?: PetStatus) {}

  private ids = new Float64Array(1024);
  private categoryIds = new Float64Array(1024);
  private statuses = new Uint8Array(1024);
  private names: string[] = [];
  size = 0;

  insert(pet: Pet): void {
    if (this.size === this.ids.length) this.grow();
    const { ids, categoryIds, statuses, names } = this;
    // Ids are handed out in order, so this is an append unless two creates finished out of order.
    let i = this.size;
    names.push(pet.name);
    while (i > 0 && (ids[i - 1] as number) > pet.id) {
      ids[i] = ids[i - 1] as number;
      categoryIds[i] = categoryIds[i - 1] as number;
      statuses[i] = statuses[i - 1] as number;
      names[i] = names[i - 1] as string;
      i--;
    }
    ids[i] = pet.id;
    categoryIds[i] = pet.categoryId;
    if (this.only === undefined) statuses[i] = PET_STATUSES.indexOf(pet.status);
    names[i] = pet.name;
    this.size++;
  }

  private grow(): void {
    const length = this.ids.length * 2;
    const ids = new Float64Array(length);
    const categoryIds = new Float64Array(length);
    const statuses = new Uint8Array(length);
    ids.set(this.ids);
    categoryIds.set(this.categoryIds);
    statuses.set(this.statuses);
    this.ids = ids;
    this.categoryIds = categoryIds;
    this.statuses = statuses;
  }

  /** Up to `limit` pets with ids greater than `after`, ascending, as new objects. */
  page(after: number, limit: number): Pet[] {
    const { ids, categoryIds, statuses, names } = this;
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((ids[mid] as number) <= after) lo = mid + 1;
      else hi = mid;
    }
    const end = Math.min(this.size, lo + limit);
    const pets = new Array<Pet>(end - lo);
    const only = this.only;
    for (let i = lo; i < end; i++) {
      pets[i - lo] = {
        id: ids[i] as number,
        name: names[i] as string,
        categoryId: categoryIds[i] as number,
        status: only ?? (PET_STATUSES[statuses[i] as number] as PetStatus),
      };
    }
    return pets;
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
  const all = new PetIndex();
  const byStatus: Record<PetStatus, PetIndex> = {
    available: new PetIndex("available"),
    pending: new PetIndex("pending"),
    sold: new PetIndex("sold"),
  };
  let lastId = 0;

  return {
    kind: "memory",
    inProcess: true,
    async create(data: PetData): Promise<Pet> {
      const id = ++lastId;
      const pet: Pet = { id, name: data.name, categoryId: data.categoryId, status: data.status };
      await values.set(String(id), pet);
      all.insert(pet);
      byStatus[pet.status].insert(pet);
      return { ...pet }; // every read hands out a new object: the caller's to change
    },
    // Reads answer synchronously: the core then builds the answer without a promise hop.
    get(id: number): Pet | undefined {
      const pet = slots.read(id);
      return pet === undefined ? undefined : { ...pet }; // a new object, as every read hands out
    },
    list({ status, after, limit }: ListPage): Pet[] {
      return (status === undefined ? all : byStatus[status]).page(after, limit);
    },
    async ping() {},
    async close() {
      await values.disconnect();
    },
  };
}
