/**
 * The storage port: the few things the operations need from a backend. Every backend
 * keeps pet values in Keyv; what Keyv cannot do (an atomic id sequence, an ordered index
 * per status) each backend does with its own connection, inside its own file.
 */
import type { Awaitable } from "../awaitable.ts";
import type { Pet, PetStatus } from "../schemas.ts";
import type { InvalidRecordError } from "./failures.ts";

export type PetData = Omit<Pet, "id">;

export interface ListPage {
  /** Only pets with this status; all pets when absent. */
  status?: PetStatus | undefined;
  /** Only pets whose id is greater than this (0 for the first page). */
  after: number;
  /** At most this many pets. */
  limit: number;
  /**
   * When given, a stored pet that cannot be decoded is left out of the page and told here (the page
   * then reads on past it, so that it still holds `limit` pets when there are as many); without it,
   * the page fails with that `InvalidRecordError` (an export wants to know). A storage that does
   * not look at it fails the page.
   */
  onInvalid?: ((error: InvalidRecordError) => void) | undefined;
}

/** The key record of an idempotent create. */
export interface IdempotencyRecord {
  /** Whose key it is (a digest of the caller's token, or an in-process caller's scope). At most 255 characters. */
  scope: string;
  /** The key: 1 to 255 characters from `!` to `~` except `"` and a backslash. */
  key: string;
  /** SHA-256 (64 hex characters) of the canonical NewPet. */
  fingerprint: string;
  /** The caller's clock, ms since the epoch: records expired by then count as absent. */
  now: number;
  /** When this record expires (ms since the epoch); after it the key is new again. */
  expiresAt: number;
}

/** A key record as stored, as an export file holds it and an import writes it. */
export interface KeyRecord {
  /** Whose key it is (see IdempotencyRecord.scope). */
  scope: string;
  /** The key itself. */
  key: string;
  /** SHA-256 (64 hex characters) of the canonical NewPet. */
  fingerprint: string;
  /** The pet the key replays. */
  petId: number;
  /** When the record expires (ms since the epoch). */
  expiresAt: number;
}

/**
 * What moving a store's data needs beyond the calls a request makes (`exportStore`, `importStore`:
 * docs/STORAGE.md, "Moving data"), each in the backend's own way. Pets are read with `list`.
 */
export interface StorageTransfer {
  /** The id the next create would take at the least (the sequence plus one), without taking it. */
  nextId(): Promise<number>;
  /** Every unexpired key record (`expiresAt` after `now`), in batches, each once, in any order. */
  keys(now: number): AsyncIterable<KeyRecord[]>;
  /**
   * Writes pets at their own ids in one atomic step and moves the sequence past the highest (never
   * back): a pet already stored with the same fields is left as it is; when an id holds another
   * pet, nothing is written and that id is answered.
   */
  putPets(pets: readonly Pet[]): Promise<{ written: number } | { conflict: number }>;
  /** Moves the sequence so that the next create takes `next` or a higher id (never back). */
  advanceIds(next: number): Promise<void>;
  /**
   * Writes key records, each expiring at its `expiresAt`, in one atomic step: a record already
   * stored with the same fields is left as it is, an expired one (by `now`) is replaced; when an
   * unexpired record of the same scope and key differs, nothing is written and it is answered.
   */
  putKeys(records: readonly KeyRecord[], now: number): Promise<{ written: number } | { conflict: KeyRecord }>;
  /**
   * The mark of an import that started and did not finish, or undefined. Optional, with
   * `setImportMark` and `undoImport`: a storage without them is imported into without a mark.
   */
  importMark?(): Promise<ImportMark | undefined>;
  /** Sets the mark (before an import's first write), or clears it with undefined (after its last). */
  setImportMark?(mark: ImportMark | undefined): Promise<void>;
  /**
   * Undoes what the import of `mark` wrote: the pets of its ranges, the key records of those pets,
   * and the sequence set back to `mark.lastId`, in batches; the mark itself stays until cleared.
   */
  undoImport?(mark: ImportMark): Promise<{ pets: number; keys: number }>;
}

/**
 * What a store keeps of an import while it is unfinished (contract 1.4): which input it is and what
 * it writes, so that the same import can finish it and `petstore import --abandon` can undo it.
 */
export interface ImportMark {
  /** SHA-256 (hex) of the input as it was checked: the same import when it matches. */
  input: string;
  /** When the import started (an ISO time). */
  startedAt: string;
  /** The last id the sequence had handed out before the import moved it. */
  lastId: number;
  /** The ids of the pets the import writes (those not stored when it started), as ascending `[first, last]` ranges. */
  pets: [number, number][];
}

/** One lease asked of a shared counter. */
export interface RateLease {
  /** Whose window it is: the caller's scope (a digest of its key, never the key). */
  scope: string;
  /** The window's number: its start in ms since the epoch divided by its length. */
  window: number;
  /** The window's length in seconds: its count may be removed once it has ended. */
  windowSeconds: number;
  /** Requests wanted now, from 1. */
  want: number;
  /** The window's limit: nothing is granted past it. */
  limit: number;
}

/**
 * A count of requests per caller and window shared by every process on one backend, each in its
 * own way (lib/storage/<backend>/rate.ts). Optional on a storage: without it limits are per process.
 */
export interface RateCounter {
  /**
   * Grants up to `want` requests of the window, never past its limit, in one atomic step across
   * processes: how many were granted (0 when the window is spent) and the window's count after it.
   */
  lease(lease: RateLease): Promise<{ granted: number; used: number }>;
}

/** What `createOnce` did: created or replayed a pet, or refused because of the key. */
export type CreateOnceResult = { pet: Pet; replayed: boolean } | { conflict: "reused" | "in_use" };

export interface PetStorage {
  /** A short name for logs and errors, e.g. "memory" or "redis". */
  readonly kind: string;
  /**
   * True when its calls cannot hang or lose a backend (storage inside this process, as memory):
   * the core then runs them without a time-out timer or a breaker, and answers readiness without
   * a read.
   */
  readonly cannotHang?: boolean;
  /**
   * True when every pet it returns was built from what the core validated and never changes once
   * created (memory): its pages are then not checked pet by pet.
   */
  readonly trustedPets?: boolean;
  /** @deprecated Say `cannotHang` and `trustedPets`, which this meant together; when given (false too), it decides both. */
  readonly inProcess?: boolean;
  /**
   * Assigns the next id (unique for the lifetime of the storage, across processes) and
   * stores the pet. Resolves once the pet is fully visible to `get` and `list`.
   */
  create(pet: PetData): Promise<Pet>;
  /**
   * The pet with this id, or undefined. May answer synchronously (the memory storage does).
   * Every Pet a storage returns is a new object: the core hands it to callers as it is.
   */
  get(id: number): Awaitable<Pet | undefined>;
  /** Pets in ascending id order, as described by `page`. May answer synchronously. */
  list(page: ListPage): Awaitable<Pet[]>;
  /**
   * Creates the pet once per idempotency key: the pet and the key record are written in one
   * atomic step (or not at all), so no crash leaves one without the other. When an unexpired
   * record of `key.scope` + `key.key` exists, nothing is written and the answer is that record's
   * pet (`replayed: true`, same fingerprint), `{ conflict: "reused" }` (another fingerprint) or
   * `{ conflict: "in_use" }` (another call with this key is still being written). A record
   * whose `expiresAt` is at or before `key.now` counts as absent. Backends also remove expired
   * records (in small batches, so storage stays bounded). Optional: without it, a create with an
   * idempotency key fails with `internal_error`.
   */
  createOnce?(pet: PetData, key: IdempotencyRecord): Awaitable<CreateOnceResult>;
  /**
   * What `createOnce` would answer without creating: the replay (or `reused`) when an unexpired
   * record holds the key, undefined when the key is free. A look-up only (it writes nothing): the
   * core asks it before the business rules so that a replay runs no rule again. Optional: without
   * it, the rules run before every keyed create.
   */
  findOnce?(key: IdempotencyRecord): Awaitable<CreateOnceResult | undefined>;
  /**
   * Resolves when the backend answers; rejects otherwise. Not what readiness asks: `ready()` makes a
   * real read (`list`), as a ping says nothing of the data.
   */
  ping(): Promise<void>;
  /** Releases connections. Idempotent. */
  close(): Promise<void>;
  /**
   * Removes everything this store wrote, and only that: its pets, its index, its id sequence
   * (ids start again at 1) and any other record under its own namespace or tables, never the
   * data of another store sharing the backend. For tests (the test kit's `reset()`): calls made
   * while it runs may see part of the old data. Optional for storages written elsewhere. A store
   * keeps nothing that a clear would make wrong: a pet's text is reused only for a pet with the
   * very same fields.
   */
  clear?(): Promise<void>;
  /** Moving data out and in (export, import, migrate). Optional: a storage without it can be neither. */
  readonly transfer?: StorageTransfer;
  /** The rate limits' count, shared by every process on the backend. Optional: without it, each process counts its own. */
  readonly rateCounter?: RateCounter;
}
