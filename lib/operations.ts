/**
 * The spec's three operations over a storage: pages with their cursors, one pet, and creates
 * (plain, or once per idempotency key), under the application's rules. Every storage call goes
 * through the store's guard; every expected failure is a `PetStoreError`.
 */
import type { Awaitable } from "./awaitable.ts";
import { isPromise } from "./awaitable.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { PetStoreError } from "./errors.ts";
import type { CheckedKey, IdempotentCreateOptions } from "./idempotency.ts";
import { DEFAULT_IDEMPOTENCY_TTL_MS, fingerprintOf } from "./idempotency.ts";
import type { CheckedListQuery } from "./query.ts";
import type { Caller, CheckedRules } from "./rules.ts";
import { createUnderRules } from "./rules.ts";
import type { CheckedNewPet, ListQuery, NewPet as NewPetInput, Pet, PetStatus } from "./schemas.ts";
import { checkNewPet, isPet, parsePetId } from "./schemas.ts";
import { hasTrustedPets } from "./storage/capabilities.ts";
import { createNowOf } from "./storage/create-now.ts";
import { type InvalidRecordError, invalidRecordOf, storageFailure } from "./storage/failures.ts";
import type { GuardedCall } from "./storage/guard.ts";
import { type ImportWatch, unfinishedImport } from "./storage/import-watch.ts";
import type { CreateOnceResult, IdempotencyRecord, ImportMark, PetStorage } from "./storage/port.ts";

/** One page of `listPets`: the pets, and the cursor of the next page when more follow. */
export interface PetPage {
  pets: Pet[];
  nextCursor: string | undefined;
  /** The effective page size (the default when none was asked for). */
  limit: number;
  status: PetStatus | undefined;
}

/**
 * What `listPets` takes: `limit` 1..100, `status` a PetStatus, `cursor` a cursor this service
 * issued. Typed as strictly as it is checked; JavaScript callers are checked at run time too (a bad
 * field is `invalid_query`).
 */
export type ListPetsInput = ListQuery;

/** What `createPet` takes: a NewPet. Checked at run time as well (a bad body is `invalid_body`). */
export type { NewPetInput };

/**
 * Who asks for an in-process create, for the business rules' `context`: a request id (default a
 * new one) and a scope (default none). @example await store.createPet(pet, { scope: "tenant-a" })
 */
export interface CreateContext {
  requestId?: string;
  scope?: string;
}

/** The spec's three operations, as plain async functions. */
export interface Operations {
  /** Pets in ascending id order. @example const { pets, nextCursor } = await store.listPets({ status: "sold", limit: 10 }) */
  listPets(query?: ListPetsInput): Promise<PetPage>;
  /**
   * Validates a NewPet, runs the business rules and stores it; rejects with the rule's
   * `RuleViolation` when `beforeCreate` refuses it. With an `idempotencyKey`, once per key: a retry
   * with the key (and the same NewPet) within retention gets the first pet again, `replayed: true`,
   * and stores nothing; rejects with `invalid_idempotency_key`, `idempotency_key_reused` (another
   * NewPet) or `idempotency_key_in_use`.
   * @example await store.createPet({ name: "Rex", categoryId: 1 })
   * @example const { pet, replayed } = await store.createPet({ name: "Rex", categoryId: 1 }, { idempotencyKey: "order-1234" })
   */
  createPet(input: NewPetInput, options: CreateContext & IdempotentCreateOptions): Promise<CreatedPet>;
  createPet(input: NewPetInput, context?: CreateContext): Promise<Pet>;
  /** The pet with this id; `pet_not_found` when there is none. Accepts a number or a decimal string. */
  getPet(id: number | string): Promise<Pet>;
}

/** What an idempotent create answers: the pet, and whether it was created before (a replay). */
export interface CreatedPet {
  pet: Pet;
  replayed: boolean;
}

/**
 * The operations as the handler and the store call them: the same work, without a promise when
 * the storage answers synchronously (and they may throw instead of rejecting).
 */
export interface CoreOperations {
  listPets(query: CheckedListQuery): Awaitable<PetPage>;
  /** Validates the input (JavaScript callers may pass anything), runs the rules and stores the pet. */
  createPet(input: unknown, caller?: Caller): Awaitable<Pet>;
  /** createPet once per (checked) key: validates the input, then creates or replays. */
  createPetOnce(input: unknown, key: CheckedKey, caller?: Caller): Awaitable<CreatedPet>;
  getPet(id: number | string): Awaitable<Pet>;
}

export interface OperationOptions {
  /** The store's guard of every storage call (lib/storage/guard.ts). */
  guard: GuardedCall;
  /** Bounds `afterCreate`. */
  timeoutMs: number;
  rules?: CheckedRules | undefined;
  /** Where the rules' failures that do not change the answer are reported. */
  onError: (error: unknown) => void;
  /** How long idempotency keys are kept. */
  ttlMs?: number;
  /** The clock of idempotency retention, ms since the epoch. */
  clock?: () => number;
  /** The watch over an unfinished import: creates are refused meanwhile. None for storage that keeps no mark. */
  imports?: ImportWatch | undefined;
}

/** What a storage hands back is checked before it is passed on: anything else is a 500, logged. */
function notAPet(kind: string, value: unknown): PetStoreError {
  const shown = typeof value === "object" && value !== null ? "an object that is not a Pet" : typeof value;
  const cause = new Error(`${kind} storage returned ${shown} where a Pet was expected`);
  return new PetStoreError("internal_error", undefined, { cause });
}

/** A cursor that this service did not issue for this filter. */
function badCursor(): PetStoreError {
  return new PetStoreError("invalid_query", "cursor must be a cursor this service issued for the same status filter.", {
    details: [{ path: "cursor", message: "is not a cursor issued by this service for this filter" }],
  });
}

export function createOperations(storage: PetStorage, options: OperationOptions): CoreOperations {
  const { guard, rules, onError, imports } = options;
  const ttlMs = options.ttlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
  const clock = options.clock ?? Date.now;
  const limits = { timeoutMs: options.timeoutMs, report: onError };
  // Such storage builds every value it returns from what the core validated: no check pet by pet.
  const trusted = hasTrustedPets(storage);
  const onInvalid = (error: InvalidRecordError) => onError(storageFailure(error));
  const checked = (pet: unknown): Pet => {
    if (isPet(pet)) return pet;
    throw notAPet(storage.kind, pet);
  };

  /** The page from what the storage found (one more than asked when another page follows). */
  function pageOf(found: unknown, limit: number, status: PetStatus | undefined): PetPage {
    if (!Array.isArray(found)) throw notAPet(storage.kind, found);
    if (!trusted) for (const pet of found) checked(pet);
    const more = found.length > limit;
    const pets: Pet[] = found;
    // The storage's own new array: trimmed in place (pop() for the usual one extra pet is the cheapest).
    if (more) {
      if (pets.length === limit + 1) pets.pop();
      else pets.length = limit;
    }
    const last = pets[pets.length - 1];
    return { pets, nextCursor: more && last ? encodeCursor(last.id, status) : undefined, limit, status };
  }

  /** The pet the storage found for `petId`, or pet_not_found. */
  function petOf(pet: unknown, petId: number): Pet {
    if (pet === undefined) throw new PetStoreError("pet_not_found", `No pet has the id ${petId}.`);
    if (checked(pet).id !== petId) throw notAPet(storage.kind, pet);
    return pet as Pet;
  }

  function listPets({ status, limit, cursor }: CheckedListQuery): Awaitable<PetPage> {
    let after = 0;
    if (cursor !== undefined) {
      const decoded = decodeCursor(cursor, status);
      if (decoded === undefined) throw badCursor();
      after = decoded;
    }
    // One more than asked tells whether a next page exists without a second query. A record that
    // cannot be decoded is left out of the page (and reported), so every other pet stays reachable.
    const found = guard("listPets", () => storage.list({ status, after, limit: limit + 1, onInvalid }));
    return isPromise(found) ? found.then((f) => pageOf(f, limit, status)) : pageOf(found, limit, status);
  }

  function getPet(id: number | string): Awaitable<Pet> {
    const petId = parsePetId(id);
    const pet = guard("getPet", () => storage.get(petId));
    return isPromise(pet) ? pet.then((p) => petOf(p, petId)) : petOf(pet, petId);
  }

  function store(data: CheckedNewPet): Awaitable<Pet> {
    const fields = { name: data.name, categoryId: data.categoryId, status: data.status };
    // Asked each time: a storage's create replaced since (a spy, a wrapper) is the one called.
    const now = createNowOf(storage.create);
    const pet = guard("createPet", now === undefined ? () => storage.create(fields) : () => now(fields));
    if (trusted) return pet;
    return isPromise(pet) ? pet.then(checked) : checked(pet);
  }

  function createPet(input: unknown, caller?: Caller): Awaitable<Pet> {
    const data = checkNewPet(input);
    // While an import is unfinished, creates wait: refused (503) until it is done.
    const refused = imports?.refuseCreates();
    if (isPromise(refused)) return refused.then(() => createChecked(data, caller));
    return createChecked(data, caller);
  }

  function createChecked(data: CheckedNewPet, caller?: Caller): Awaitable<Pet> {
    if (rules === undefined) return store(data);
    const write = (d: CheckedNewPet): Awaitable<CreatedPet> => {
      const pet = store(d);
      return isPromise(pet) ? pet.then((p) => ({ pet: p, replayed: false })) : { pet, replayed: false };
    };
    return createUnderRules(rules, data, caller, write, limits).then((created) => created.pet);
  }

  function outcomeOf(result: CreateOnceResult): CreatedPet {
    if ("conflict" in result) {
      throw new PetStoreError(result.conflict === "reused" ? "idempotency_key_reused" : "idempotency_key_in_use");
    }
    if (!trusted) checked(result.pet);
    return { pet: result.pet, replayed: result.replayed === true };
  }

  function createPetOnce(input: unknown, key: CheckedKey, caller?: Caller): Awaitable<CreatedPet> {
    const data = checkNewPet(input);
    if (imports === undefined) return createCheckedOnce(data, key, caller);
    const mark = imports.current();
    const decide = (found: ImportMark | undefined) =>
      found === undefined ? createCheckedOnce(data, key, caller) : replayDuringImport(data, key, found);
    return isPromise(mark) ? mark.then(decide) : decide(mark);
  }

  /**
   * A keyed create while an import is unfinished: the replay of its key when the import wrote the
   * key and its pet already (keys come first), else refused with the import's 503.
   */
  function replayDuringImport(
    data: CheckedNewPet,
    { scope, key }: CheckedKey,
    mark: ImportMark,
  ): Awaitable<CreatedPet> {
    const findOnce = storage.findOnce;
    const now = clock();
    const record = { scope, key, fingerprint: fingerprintOf(data), now, expiresAt: now + ttlMs };
    const refuse = (): never => {
      throw unfinishedImport(mark);
    };
    if (findOnce === undefined) return refuse();
    const found = guard("createPet", () => findOnce.call(storage, record));
    const decide = (f: CreateOnceResult | undefined) => (f === undefined ? refuse() : outcomeOf(f));
    return (isPromise(found) ? found : Promise.resolve(found)).then(decide, (error: unknown) => {
      // The key's pet not written yet: it will be, once the import is done.
      if (invalidRecordOf(error) !== undefined) return refuse();
      throw error;
    });
  }

  function createCheckedOnce(data: CheckedNewPet, { scope, key }: CheckedKey, caller?: Caller): Awaitable<CreatedPet> {
    const createOnce = storage.createOnce;
    if (createOnce === undefined) {
      const cause = new Error(`${storage.kind} storage has no createOnce: it cannot take idempotent creates`);
      throw new PetStoreError("internal_error", undefined, { cause });
    }
    const recordOf = (d: CheckedNewPet): IdempotencyRecord => {
      const now = clock();
      return { scope, key, fingerprint: fingerprintOf(d), now, expiresAt: now + ttlMs };
    };
    const write = (d: CheckedNewPet): Awaitable<CreatedPet> => {
      const record = recordOf(d);
      const result = guard("createPet", () => createOnce.call(storage, d, record));
      return isPromise(result) ? result.then(outcomeOf) : outcomeOf(result);
    };
    if (rules === undefined) return write(data);
    const findOnce = storage.findOnce;
    if (findOnce === undefined) return createUnderRules(rules, data, caller, write, limits);
    // A replay (or a reused key) is answered before the rules: a retry runs neither rule again.
    const found = guard("createPet", () => findOnce.call(storage, recordOf(data)));
    const next = (f: CreateOnceResult | undefined) =>
      f === undefined ? createUnderRules(rules, data, caller, write, limits) : outcomeOf(f);
    return isPromise(found) ? found.then(next) : next(found);
  }

  return { listPets, createPet, createPetOnce, getPet };
}
