/**
 * The embedded default: pets in columns indexed by id, an in-process id sequence, and one sorted
 * index per status (columns of the same values), so a page costs a binary search and a copy
 * whatever the size of the store.
 */
import type { Pet, PetStatus } from "../../schemas.ts";
import { PET_STATUSES } from "../../schemas.ts";
import { withTwin } from "../create-now.ts";
import type { CreateOnceResult, IdempotencyRecord, ListPage, PetData, PetStorage } from "../port.ts";
import type { CountsWrites } from "../write-count.ts";
import { WRITE_COUNT } from "../write-count.ts";
import { MemoryKeys } from "./keys.ts";
import { makeMemoryTransfer } from "./transfer.ts";

/** Expired idempotency records removed per write at most: a write never pays for a long quiet spell at once. */
const SWEEP_BATCH = 64;

type Column = Float64Array<ArrayBuffer> | Uint8Array<ArrayBuffer>;

/** A column of the same kind, doubled until it holds index `index`, with the same values (columns grow by doubling). */
function growColumn<C extends Column>(column: C, index = column.length): C {
  let length = column.length * 2;
  while (index >= length) length *= 2;
  const next = new (column.constructor as new (length: number) => C)(length);
  next.set(column);
  return next;
}

/**
 * The pets of one status, sorted by id, in columns: ids and category ids in typed arrays, names
 * in an array of strings. A page reads one contiguous run of each column, so it costs the same
 * whether its pets lie next to each other in the store or a million apart.
 */
class StatusIndex {
  private ids = new Float64Array(1024);
  private categoryIds = new Float64Array(1024);
  private readonly names: string[] = [];
  private size = 0;

  constructor(private readonly status: PetStatus) {}

  insert(id: number, name: string, categoryId: number): void {
    if (this.size === this.ids.length) {
      this.ids = growColumn(this.ids);
      this.categoryIds = growColumn(this.categoryIds);
    }
    const { ids, categoryIds, names } = this;
    // Ids are handed out in order, so this is an append unless two creates finished out of order.
    let i = this.size;
    names.push(name);
    while (i > 0 && (ids[i - 1] as number) > id) {
      ids[i] = ids[i - 1] as number;
      categoryIds[i] = categoryIds[i - 1] as number;
      names[i] = names[i - 1] as string;
      i--;
    }
    ids[i] = id;
    categoryIds[i] = categoryId;
    names[i] = name;
    this.size++;
  }

  /**
   * The position of the first id greater than `after`. Ids of one status spread fairly evenly over
   * the id range, so the search starts where `after` would fall if they were even, and widens
   * from there in doubling steps before the binary search: a handful of reads near one place
   * rather than a binary search's 20 reads across the whole column, each a likely cache miss in a
   * large store. Uneven ids cost at most twice a binary search.
   */
  private firstAfter(after: number): number {
    const { ids, size } = this;
    if (size === 0 || after < (ids[0] as number)) return 0;
    const top = ids[size - 1] as number;
    if (after >= top) return size;
    const first = ids[0] as number;
    const guess = Math.min(size - 1, Math.floor(((after - first) / (top - first)) * (size - 1)));
    // Bounds with ids[lo - 1] <= after < ids[hi], found by doubling steps away from the guess.
    let lo: number;
    let hi: number;
    if ((ids[guess] as number) <= after) {
      let step = 1;
      lo = guess + 1;
      while (lo + step - 1 < size && (ids[lo + step - 1] as number) <= after) {
        lo += step;
        step *= 2;
      }
      hi = Math.min(size, lo + step - 1);
    } else {
      let step = 1;
      hi = guess;
      while (hi - step >= 0 && (ids[hi - step] as number) > after) {
        hi -= step;
        step *= 2;
      }
      lo = Math.max(0, hi - step + 1);
    }
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((ids[mid] as number) <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Up to `limit` pets with ids greater than `after`, ascending, as new objects. */
  page(after: number, limit: number): Pet[] {
    const { ids, categoryIds, names, status } = this;
    const lo = this.firstAfter(after);
    const end = Math.min(this.size, lo + limit);
    const pets = new Array<Pet>(end - lo);
    for (let i = lo; i < end; i++) {
      pets[i - lo] = { id: ids[i] as number, name: names[i] as string, categoryId: categoryIds[i] as number, status };
    }
    return pets;
  }
}

export interface MemoryStorageOptions {
  /**
   * Does nothing: each memory storage is its own, so there is nothing to keep apart.
   * @deprecated since 1.2.0 (removed in 2.0): accepted and ignored.
   */
  namespace?: string;
}

/**
 * The pets in columns indexed by id (ids are 1..n within one process). No object is kept per pet:
 * a million pets are a few arrays, not a million objects for the garbage collector to trace and
 * move, and a lookup is an array read. Reads build a new Pet each time.
 */
class PetTable {
  private readonly names: (string | undefined)[] = [undefined]; // slot 0 unused: ids start at 1
  private categoryIds = new Float64Array(1024);
  private statuses = new Uint8Array(1024); // 0: no pet; else 1 + the index in PET_STATUSES
  /** The highest id stored. */
  top = 0;
  /** Every write and clear so far (WRITE_COUNT): an answer made since the last one is still true. */
  writes = 0;

  /** The pet with this id, as a new object, or undefined: the hot path of reads. */
  read(id: number): Pet | undefined {
    const code = this.statuses[id];
    if (code === undefined || code === 0) return undefined;
    return {
      id,
      name: this.names[id] as string,
      categoryId: this.categoryIds[id] as number,
      status: PET_STATUSES[code - 1] as PetStatus,
    };
  }

  /** Up to `limit` pets with ids greater than `after`, ascending: one contiguous run of each column. */
  page(after: number, limit: number): Pet[] {
    const pets: Pet[] = [];
    for (let id = Math.floor(after) + 1; id <= this.top && pets.length < limit; id++) {
      const pet = this.read(id);
      if (pet !== undefined) pets.push(pet);
    }
    return pets;
  }

  /** Stores the pet under its id. */
  write(id: number, pet: Pet): void {
    this.writes++;
    if (id >= this.statuses.length) {
      this.categoryIds = growColumn(this.categoryIds, id);
      this.statuses = growColumn(this.statuses, id);
    }
    const names = this.names;
    while (names.length < id) names.push(undefined); // keeps the array dense (ids come in order)
    names[id] = pet.name;
    this.categoryIds[id] = pet.categoryId;
    this.statuses[id] = PET_STATUSES.indexOf(pet.status) + 1;
    if (id > this.top) this.top = id;
  }

  clear(): void {
    this.writes++;
    this.names.length = 1;
    this.categoryIds = new Float64Array(1024);
    this.statuses = new Uint8Array(1024);
    this.top = 0;
  }
}

/** In-process storage; nothing survives the process. @example createPetStore({ storage: memoryStorage(), auth }) */
// biome-ignore lint/correctness/noUnusedFunctionParameters: its only option does nothing, but the signature is public until 2.0
export function memoryStorage(options: MemoryStorageOptions = {}): PetStorage {
  const table = new PetTable();
  const byStatus: Record<PetStatus, StatusIndex> = {
    available: new StatusIndex("available"),
    pending: new StatusIndex("pending"),
    sold: new StatusIndex("sold"),
  };
  const sequence = { last: 0 };
  const keys = new MemoryKeys();

  /**
   * Stores a new pet in one synchronous step: in the table and its status index. The pet returned
   * is the caller's: the table keeps columns, not this object.
   */
  function insert(data: PetData): Pet {
    const pet: Pet = { id: ++sequence.last, name: data.name, categoryId: data.categoryId, status: data.status };
    write(pet);
    return pet;
  }

  /** Stores a pet at its id: in the table and its status index. */
  function write(pet: Pet): void {
    table.write(pet.id, pet);
    byStatus[pet.status].insert(pet.id, pet.name, pet.categoryId);
  }

  const storage: PetStorage & CountsWrites = {
    kind: "memory",
    cannotHang: true,
    trustedPets: true,
    // One synchronous step, as createOnce: the table, then the index. The core calls its twin,
    // insert, and answers without a promise (./create-now.ts).
    create: withTwin((data: PetData): Promise<Pet> => Promise.resolve(insert(data)), insert),
    // One synchronous step: no other call can run between the look-up and the writes.
    createOnce(data: PetData, record: IdempotencyRecord): CreateOnceResult {
      keys.sweep(record.now, SWEEP_BATCH);
      const slot = keys.find(record.scope, record.key, record.now);
      if (slot !== undefined) {
        if (!keys.matches(slot, record.fingerprint)) return { conflict: "reused" };
        const pet = table.read(keys.petId(slot));
        if (pet !== undefined) return { pet, replayed: true };
      }
      const pet = insert(data);
      keys.add(record.scope, record.key, record.fingerprint, pet.id, record.expiresAt);
      return { pet, replayed: false };
    },
    findOnce(record: IdempotencyRecord): CreateOnceResult | undefined {
      const slot = keys.find(record.scope, record.key, record.now);
      if (slot === undefined) return undefined;
      if (!keys.matches(slot, record.fingerprint)) return { conflict: "reused" };
      const pet = table.read(keys.petId(slot));
      return pet === undefined ? undefined : { pet, replayed: true };
    },
    // Reads answer synchronously: the core then builds the answer without a promise hop.
    get(id: number): Pet | undefined {
      return table.read(id); // a new object, as every read hands out
    },
    list({ status, after, limit }: ListPage): Pet[] {
      return status === undefined ? table.page(after, limit) : byStatus[status].page(after, limit);
    },
    [WRITE_COUNT]: () => table.writes,
    async ping() {},
    async close() {
      keys.clear();
    },
    /** Forgets every pet; ids start again at 1. */
    async clear() {
      table.clear();
      keys.clear();
      for (const status of PET_STATUSES) byStatus[status] = new StatusIndex(status);
      sequence.last = 0;
    },
    transfer: makeMemoryTransfer({ read: (id) => table.read(id), write, keys, sequence }),
  };
  return storage;
}
