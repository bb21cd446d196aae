/**
 * `createPetStoreClient`: the store's own `Operations` over HTTP. Every call is one or more
 * attempts (client/retry.ts): reads are retried on network failures, time-outs, `503` and `429`
 * (after its `Retry-After`); a create carries one `Idempotency-Key` through all of its attempts and is
 * retried on those and on `409 idempotency_key_in_use`. Any other answer ends the call, as a value or
 * a `PetStoreError`.
 */

import type { Pet } from "../lib/entries/schemas.ts";
import { PetStoreError } from "../lib/errors.ts";
import type {
  CreateContext,
  CreatedPet,
  IdempotentCreateOptions,
  ListPetsInput,
  NewPetInput,
  Operations,
  PetPage,
} from "../lib/index.ts";
import type { DeprecationNotice } from "./answers.ts";
import { codeOf, deprecationOf, errorOf, nextCursorOf, nextLimitOf, petOf, petsOf } from "./answers.ts";
import type { Answer } from "./exchange.ts";
import { exchange } from "./exchange.ts";
import { isIdempotencyKey, newIdempotencyKey } from "./keys.ts";
import type { PetStoreClientOptions } from "./options.ts";
import { checkClientOptions } from "./options.ts";
import { listQuery, newPetBody, petIdSegment } from "./requests.ts";
import type { Outcome } from "./retry.ts";
import { retryAfterMs, withRetries } from "./retry.ts";
import { conditionOf, Revalidation } from "./revalidation.ts";

/** Options of any call: `signal` aborts it, waits between attempts included. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** What `pets()` takes: the filter and the page size of the walk. */
export interface PetsQuery {
  status?: ListPetsInput["status"];
  limit?: number;
}

/** The store's `Operations` over HTTP, each taking an `AbortSignal`, and `pets()`, every pet. */
export interface PetStoreClient extends Operations {
  /** One page; `nextCursor` comes from the answer's `Link: rel="next"`. */
  listPets(query?: ListPetsInput, options?: CallOptions): Promise<PetPage>;
  /**
   * Creates a pet, once: every attempt carries the same `Idempotency-Key` (`idempotencyKey`, or a
   * new UUID per call). With `idempotencyKey` it resolves `{ pet, replayed }`, as the store does.
   */
  createPet(input: NewPetInput, options: CreateContext & IdempotentCreateOptions & CallOptions): Promise<CreatedPet>;
  createPet(input: NewPetInput, options?: CreateContext & CallOptions): Promise<Pet>;
  /** The pet with this id (`pet_not_found` when none); deprecated by the API: see `onDeprecation`. */
  getPet(id: number | string, options?: CallOptions): Promise<Pet>;
  /**
   * Every pet (of `status`, when given) in id order, page after page (`limit` per page), following
   * `Link: rel="next"` to the end.
   * @example for await (const pet of client.pets({ status: "available" })) console.log(pet.name);
   */
  pets(query?: PetsQuery, options?: CallOptions): AsyncIterableIterator<Pet>;
}

/** The page size the API uses when none is asked for. */
const DEFAULT_LIMIT = 20;

/** Which failures a call retries: a create also retries the answer that its key is still being written. */
type Retrying = "read" | "create";

/**
 * A client of a Pet Store API with the store's own interface: code written against
 * `createPetStore()` runs against a remote store unchanged.
 *
 * @example
 *   const pets = createPetStoreClient({ baseUrl: "https://pets.example/v1", key: process.env.PETS_KEY });
 *   const rex = await pets.createPet({ name: "Rex", categoryId: 1 }); // retried safely, stored once
 */
export function createPetStoreClient(options: PetStoreClientOptions): PetStoreClient {
  const config = checkClientOptions(options);
  const revalidation = config.revalidate ? new Revalidation() : undefined;
  let deprecationTold = false;

  /** Sends one request, retried as `retrying` allows, and resolves the successful answer. */
  function call(
    method: string,
    path: string,
    retrying: Retrying,
    init: RequestInit,
    signal: AbortSignal | undefined,
    onAnswer?: (answer: Answer) => void,
  ) {
    const url = `${config.base}${path}`;
    // A read holding an earlier answer asks whether it changed (If-None-Match); every attempt holds the same one.
    const reading = revalidation !== undefined && method === "GET" ? revalidation : undefined;
    const held = reading?.heldFor(url);
    const attempt = async (timeoutMs: number): Promise<Outcome<Answer>> => {
      // Asked each attempt: a token function may give a renewed token for a retry.
      const headers = {
        authorization: await config.authorization(),
        ...conditionOf(held),
        ...(init.headers as Record<string, string>),
      };
      let answer: Answer;
      try {
        answer = await exchange(config.fetch, url, { ...init, method, headers }, timeoutMs, signal);
      } catch (error) {
        // The caller's abort ends the call; a time-out or a network failure is worth another attempt.
        if (signal?.aborted) throw error;
        return { ok: false, error, retry: true };
      }
      if (reading !== undefined) answer = reading.settle(url, answer, held);
      onAnswer?.(answer);
      if (answer.status >= 200 && answer.status < 300) return { ok: true, value: answer };
      const retry =
        answer.status === 503 ||
        answer.status === 429 || // rate limited: nothing was done, and Retry-After says when to come back
        (retrying === "create" && answer.status === 409 && codeOf(answer) === "idempotency_key_in_use");
      return {
        ok: false,
        error: errorOf(answer),
        retry,
        retryAfterMs: retryAfterMs(answer.headers.get("retry-after")),
      };
    };
    return withRetries(config.retry, config.timeoutMs, signal, attempt);
  }

  function tellDeprecation(notice: DeprecationNotice | undefined): void {
    if (notice === undefined || deprecationTold || config.onDeprecation === undefined) return;
    deprecationTold = true;
    try {
      config.onDeprecation(notice);
    } catch {
      // What the callback throws never changes the answer.
    }
  }

  async function listPets(query?: ListPetsInput, callOptions?: CallOptions): Promise<PetPage> {
    const answer = await call("GET", `/pets${listQuery(query)}`, "read", {}, callOptions?.signal);
    return {
      pets: petsOf(answer),
      nextCursor: nextCursorOf(answer.headers),
      limit: query?.limit ?? nextLimitOf(answer.headers) ?? DEFAULT_LIMIT,
      status: query?.status,
    };
  }

  async function getPet(id: number | string, callOptions?: CallOptions): Promise<Pet> {
    // Its 404 and 400 answers carry the deprecation headers too: every answer is looked at.
    const path = `/pets/${petIdSegment(id)}`;
    const seen = (answer: Answer) => tellDeprecation(deprecationOf(answer.headers, `${config.base}${path}`));
    return petOf(await call("GET", path, "read", {}, callOptions?.signal, seen));
  }

  async function createPet(
    input: NewPetInput,
    createOptions?: CreateContext & Partial<IdempotentCreateOptions> & CallOptions,
  ): Promise<Pet | CreatedPet> {
    const given = createOptions !== undefined && createOptions !== null && "idempotencyKey" in createOptions;
    if (createOptions?.scope !== undefined) {
      throw new TypeError("createPet: scope cannot be chosen over HTTP: the server takes it from the key");
    }
    const key = given ? createOptions?.idempotencyKey : newIdempotencyKey();
    if (!isIdempotencyKey(key)) throw new PetStoreError("invalid_idempotency_key");
    const headers: Record<string, string> = { "content-type": "application/json", "idempotency-key": key };
    const requestId = createOptions?.requestId;
    if (typeof requestId === "string" && /^[A-Za-z0-9._-]{1,128}$/.test(requestId)) headers["x-request-id"] = requestId;
    const body = newPetBody(input);
    const answer = await call("POST", "/pets", "create", { headers, body }, createOptions?.signal);
    const pet = petOf(answer);
    return given ? { pet, replayed: answer.headers.get("idempotent-replayed") === "true" } : pet;
  }

  async function* pets(query: PetsQuery = {}, callOptions?: CallOptions): AsyncIterableIterator<Pet> {
    let cursor: string | undefined;
    do {
      const page = await listPets({ ...query, ...(cursor === undefined ? {} : { cursor }) }, callOptions);
      yield* page.pets;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  return { listPets, getPet, createPet: createPet as PetStoreClient["createPet"], pets };
}
