/**
 * The spec's three operations as plain async functions: validation of their inputs, the
 * business rules, and the mapping of storage failures to `storage_unavailable`.
 * They throw `PetStoreError` for every expected failure.
 */
import * as v from "valibot";
import type { Awaitable } from "./awaitable.ts";
import { isPromise } from "./awaitable.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { PetStoreError, storageUnavailable } from "./errors.ts";
import type { IdempotentCreateOptions } from "./idempotency.ts";
import {
  DEFAULT_IDEMPOTENCY_TTL_MS,
  fingerprintOf,
  isIdempotencyKey,
  MAX_SCOPE_LENGTH,
  scopeOf,
} from "./idempotency.ts";
import type { Observer, StorageOperation } from "./observe.ts";
import type { CheckedNewPet, CheckedRules, RuleContext } from "./rules.ts";
import { isRuleViolation } from "./rules.ts";
import type { NewPet as NewPetInput, Pet, PetStatus } from "./schemas.ts";
import { DEFAULT_LIMIT, isPet, issueDetails, ListQuery, MAX_ID, NewPet } from "./schemas.ts";
import type { CreateOnceResult, IdempotencyRecord, PetStorage } from "./storage/port.ts";

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

/** The key of an idempotent create once checked. */
export interface CheckedKey {
  scope: string;
  key: string;
}

/** How idempotency keys are kept: for how long, by which clock. */
export interface RetentionOptions {
  ttlMs: number;
  /** ms since the epoch. */
  clock: () => number;
}

/** Who asks for a create, as the handler or the store knows it. */
export interface Caller {
  requestId: string;
  token?: string | undefined;
  scope?: string | undefined;
  /** Report a rule's unexpected failure to onError here (in process; over HTTP the handler reports the 500). */
  report?: boolean;
}

/** What the operations need besides the storage. */
export interface OperationOptions {
  timeoutMs: number;
  rules?: CheckedRules | undefined;
  onError?: (error: unknown) => void;
  /** Told of each storage call (made safe by the store: it never throws). */
  observe?: Observer | undefined;
}

/** The list query once checked: what the core's `listPets` takes. */
export interface CheckedListQuery {
  status: PetStatus | undefined;
  limit: number;
  cursor: string | undefined;
}

/** A storage call: its answer, or a promise of it; any failure becomes `storage_unavailable`. */
export type Guard = <T>(call: () => Awaitable<T>) => Awaitable<T>;

/**
 * Runs a storage call with a time-out; any failure of the backend becomes `storage_unavailable`.
 * A call costs one timer and one promise beyond the storage's own (no race of promises).
 * In-process storage (`inProcess`) runs without the timer, and a synchronous answer stays
 * synchronous: a page from memory costs no promise at all.
 */
export function guardStorage(timeoutMs: number, inProcess = false): Guard {
  return function guarded<T>(call: () => Awaitable<T>): Awaitable<T> {
    let result: Awaitable<T>;
    try {
      result = call();
    } catch (error) {
      throw storageUnavailable(error);
    }
    if (!isPromise(result)) return result;
    if (inProcess) {
      return result.then(undefined, (error: unknown) => {
        throw storageUnavailable(error);
      });
    }
    const pending = result;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new PetStoreError("storage_unavailable", "The storage backend did not answer in time.")),
        timeoutMs,
      );
      pending.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(storageUnavailable(error));
        },
      );
    });
  };
}

/** A storage call of one operation, guarded; observed when the store has an observer. */
type Call = <T>(operation: StorageOperation, call: () => Awaitable<T>) => Awaitable<T>;

/**
 * The guard, plus one `observe` a call with its duration and outcome. A synchronous answer stays
 * synchronous; the duration of an asynchronous one runs until its promise settles.
 */
export function observedGuard(guard: Guard, backend: string, observe: Observer | undefined): Call {
  if (observe === undefined) return (_, call) => guard(call);
  // No closure a call on the synchronous path: under tsx each one costs a property definition.
  const report = (operation: StorageOperation, started: number, failed: boolean) =>
    observe({ kind: "storage", operation, backend, durationMs: performance.now() - started, failed });
  return function observed<T>(operation: StorageOperation, call: () => Awaitable<T>): Awaitable<T> {
    const started = performance.now();
    let result: Awaitable<T>;
    try {
      result = guard(call);
    } catch (error) {
      report(operation, started, true);
      throw error;
    }
    if (!isPromise(result)) {
      report(operation, started, false);
      return result;
    }
    return result.then(
      (value) => {
        report(operation, started, false);
        return value;
      },
      (error: unknown) => {
        report(operation, started, true);
        throw error;
      },
    );
  };
}

/** Parses a petId: a decimal integer from 1 to 2^53-1, as a number or a string. */
function parsePetId(id: unknown): number {
  if (typeof id === "number") {
    if (Number.isSafeInteger(id) && id >= 1) return id;
  } else if (typeof id === "string" && id.length > 0 && id.length <= 16 && /^[0-9]+$/.test(id)) {
    const n = Number(id);
    if (n >= 1 && n <= MAX_ID) return n;
  }
  throw new PetStoreError("invalid_pet_id");
}

/** What a storage hands back is checked before it is passed on: anything else is a 500, logged. */
function notAPet(kind: string, value: unknown): PetStoreError {
  const shown = typeof value === "object" && value !== null ? "an object that is not a Pet" : typeof value;
  const cause = new Error(`${kind} storage returned ${shown} where a Pet was expected`);
  return new PetStoreError("internal_error", undefined, { cause });
}

/**
 * The operations as the handler and the store call them: the same work, without a promise when
 * the storage answers synchronously (and they may throw instead of rejecting).
 */
export interface CoreOperations {
  /** A page, from a query already checked (status a PetStatus, limit 1..100). */
  listPets(query: CheckedListQuery): Awaitable<PetPage>;
  /**
   * Validates the input (JavaScript callers may pass anything), runs the rules and stores the
   * pet. `caller` gives the rules' context: the request id, and the bearer token (over HTTP, turned
   * into a scope here, only when there are rules) or a scope (in process).
   */
  createPet(input: unknown, caller?: Caller): Awaitable<Pet>;
  getPet(id: number | string): Awaitable<Pet>;
  /** createPet once per key (checked): validates the input, then creates or replays. */
  createPetOnce(input: unknown, key: CheckedKey, caller?: Caller): Awaitable<CreatedPet>;
}

/** The key and scope of an in-process idempotent create, checked (`invalid_idempotency_key` otherwise). */
export function checkIdempotentOptions(options: IdempotentCreateOptions): CheckedKey {
  if (options === null || typeof options !== "object" || !isIdempotencyKey(options.idempotencyKey)) {
    throw new PetStoreError("invalid_idempotency_key");
  }
  const scope = options.scope ?? "";
  // No NUL: Postgres text cannot hold one, and a scope must be a scope on every backend.
  if (typeof scope !== "string" || scope.length > MAX_SCOPE_LENGTH || scope.includes("\0")) {
    throw new PetStoreError(
      "invalid_idempotency_key",
      `scope must be a string of at most ${MAX_SCOPE_LENGTH} characters, without NUL.`,
    );
  }
  return { scope, key: options.idempotencyKey };
}

export function createOperations(
  storage: PetStorage,
  options: OperationOptions | number,
  retention: RetentionOptions = { ttlMs: DEFAULT_IDEMPOTENCY_TTL_MS, clock: Date.now },
): CoreOperations {
  const {
    timeoutMs,
    rules,
    onError = () => {},
    observe,
  } = typeof options === "number" ? { timeoutMs: options } : options;
  const guarded = observedGuard(guardStorage(timeoutMs, storage.inProcess === true), storage.kind, observe);
  // In-process storage builds every value it returns from what the core validated: a page from
  // it is not checked pet by pet (reading each one would be the most of its cost).
  const trusted = storage.inProcess === true;
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
    // The array is the storage's new one: no copy. pop() for the usual one extra pet: cheaper than setting length.
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
      if (decoded === undefined) {
        throw new PetStoreError("invalid_query", undefined, {
          details: [{ path: "cursor", message: "is not a cursor issued by this service for this filter" }],
        });
      }
      after = decoded;
    }
    // One more than asked tells whether a next page exists without a second query.
    const found = guarded("listPets", () => storage.list({ status, after, limit: limit + 1 }));
    return isPromise(found) ? found.then((f) => pageOf(f, limit, status)) : pageOf(found, limit, status);
  }

  function getPet(id: number | string): Awaitable<Pet> {
    const petId = parsePetId(id);
    const pet = guarded("getPet", () => storage.get(petId));
    return isPromise(pet) ? pet.then((p) => petOf(p, petId)) : petOf(pet, petId);
  }

  /** The NewPet with defaults applied, or `invalid_body`. */
  function newPet(input: unknown): CheckedNewPet {
    const parsed = v.safeParse(NewPet, input);
    if (!parsed.success) {
      const details = issueDetails(parsed.issues);
      const message =
        details.length === 1 && details[0]?.path === ""
          ? `The request body is not a valid NewPet: ${details[0].message}.`
          : `The request body is not a valid NewPet: ${details.map((d) => `${d.path} ${d.message}`).join("; ")}.`;
      throw new PetStoreError("invalid_body", message, { details });
    }
    const { name, categoryId, status = "available" } = parsed.output;
    return { name, categoryId, status };
  }

  function createPet(input: unknown, caller?: Caller): Awaitable<Pet> {
    const data = newPet(input);
    if (rules !== undefined) return createWithRules(rules, data, caller, storeNew).then((created) => created.pet);
    return store(data);
  }

  function storeNew(data: CheckedNewPet): Awaitable<CreatedPet> {
    const pet = store(data);
    return isPromise(pet) ? pet.then((p) => ({ pet: p, replayed: false })) : { pet, replayed: false };
  }

  function store(data: CheckedNewPet): Awaitable<Pet> {
    const pet = guarded("createPet", () =>
      storage.create({ name: data.name, categoryId: data.categoryId, status: data.status }),
    );
    if (trusted) return pet;
    return isPromise(pet) ? pet.then(checked) : checked(pet);
  }

  function onceOutcome(result: CreateOnceResult): CreatedPet {
    if ("conflict" in result) {
      throw new PetStoreError(result.conflict === "reused" ? "idempotency_key_reused" : "idempotency_key_in_use");
    }
    if (!trusted) checked(result.pet);
    return { pet: result.pet, replayed: result.replayed === true };
  }

  function createPetOnce(input: unknown, { scope, key }: CheckedKey, caller?: Caller): Awaitable<CreatedPet> {
    const data = newPet(input);
    if (storage.createOnce === undefined) {
      const cause = new Error(`${storage.kind} storage has no createOnce: it cannot take idempotent creates`);
      throw new PetStoreError("internal_error", undefined, { cause });
    }
    const recordOf = (checked: CheckedNewPet): IdempotencyRecord => {
      const now = retention.clock();
      return { scope, key, fingerprint: fingerprintOf(checked), now, expiresAt: now + retention.ttlMs };
    };
    const write = (checked: CheckedNewPet): Awaitable<CreatedPet> => {
      const record = recordOf(checked);
      const result = guarded("createPet", () =>
        (storage.createOnce as NonNullable<PetStorage["createOnce"]>)(checked, record),
      );
      return isPromise(result) ? result.then(onceOutcome) : onceOutcome(result);
    };
    if (rules === undefined) return write(data);
    const findOnce = storage.findOnce;
    if (findOnce === undefined) return createWithRules(rules, data, caller, write);
    // A replay (or a reused key) is answered before the rules: a retry runs neither rule again.
    const found = guarded("createPet", () => findOnce.call(storage, recordOf(data)));
    const next = (f: CreateOnceResult | undefined) =>
      f === undefined ? createWithRules(rules, data, caller, write) : onceOutcome(f);
    return isPromise(found) ? found.then(next) : next(found);
  }
  /** beforeCreate, the create, then afterCreate (waited for, bounded, its failures only reported). */
  async function createWithRules(
    r: CheckedRules,
    data: CheckedNewPet,
    caller: Caller | undefined,
    write: (data: CheckedNewPet) => Awaitable<CreatedPet>,
  ): Promise<CreatedPet> {
    const context: RuleContext = Object.freeze({
      requestId: caller?.requestId ?? "",
      scope: caller?.token !== undefined ? scopeOf(caller.token) : caller?.scope,
    });
    if (r.beforeCreate !== undefined) {
      try {
        // A copy: what the rule sees cannot change what is stored.
        await r.beforeCreate(Object.freeze({ ...data }), context);
      } catch (error) {
        if (isRuleViolation(error)) throw error;
        const failure = new PetStoreError("internal_error", undefined, {
          cause: new Error("rules.beforeCreate threw something other than a RuleViolation", { cause: error }),
        });
        if (caller?.report === true) report(failure);
        throw failure;
      }
    }
    const created = await write(data);
    // A replay stored nothing: afterCreate ran when the pet was created.
    if (r.afterCreate !== undefined && !created.replayed) await afterCreate(r.afterCreate, created.pet, context);
    return created;
  }

  function report(error: unknown): void {
    try {
      onError(error);
    } catch {}
  }

  /** Runs afterCreate on a copy of the pet, for at most the operation time-out; never throws. */
  async function afterCreate(rule: NonNullable<CheckedRules["afterCreate"]>, pet: Pet, context: RuleContext) {
    let timer: NodeJS.Timeout | undefined;
    const failed = (error: unknown) =>
      report(new Error("rules.afterCreate failed; the pet is stored and the answer is unchanged", { cause: error }));
    try {
      const done = Promise.resolve(rule({ ...pet }, context));
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), timeoutMs);
      });
      const outcome = await Promise.race([done, late]);
      if (outcome === "late") {
        report(
          new Error(
            `rules.afterCreate took longer than ${timeoutMs} ms: the answer was sent without waiting further (pet ${pet.id})`,
          ),
        );
        done.then(undefined, failed);
      }
    } catch (error) {
      failed(error);
    } finally {
      clearTimeout(timer);
    }
  }

  return { listPets, createPet, getPet, createPetOnce };
}

/** The list query of the in-process `listPets`, checked, or an `invalid_query` PetStoreError. */
export function checkListQuery(query: unknown = {}): CheckedListQuery {
  const parsed = v.safeParse(ListQuery, query);
  if (!parsed.success) {
    throw new PetStoreError("invalid_query", undefined, { details: issueDetails(parsed.issues) });
  }
  const { status, cursor, limit = DEFAULT_LIMIT } = parsed.output;
  return { status, limit, cursor };
}
