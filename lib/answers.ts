/**
 * Step 3 of the handler, the operations' answers: a page with its `Link`, one pet with the
 * deprecation headers (each with its validator, or the `304` that replaces it), and a create
 * (idempotency key, body headers, body, then the pet). What they throw or reject with, the handler
 * turns into the contract's answers.
 */
import type { Awaitable } from "./awaitable.ts";
import { isPromise } from "./awaitable.ts";
import { parseJson, refusedBody } from "./body.ts";
import type { Refusal } from "./errors.ts";
import { isRefusal, refuse } from "./errors.ts";
import type { Exchange, Handler, PageAnswer, ShownPage } from "./exchange.ts";
import type { PetStoreResponse } from "./http.ts";
import type { CheckedKey } from "./idempotency.ts";
import { parseIdempotencyKey, scopeOf } from "./idempotency.ts";
import type { PetText } from "./json.ts";
import { isTextOf, join } from "./json.ts";
import type { PetPage } from "./operations.ts";
import { listQuery } from "./query.ts";
import type { Pet } from "./schemas.ts";
import { flat } from "./text.ts";
import type { PageValidator } from "./validators.ts";
import { isNotModified, pageValidator, petValidator } from "./validators.ts";

/**
 * What a pet or a page varies with besides its URL: its coding, whoever compresses it (the Node
 * adapter, hapi, Deno, a proxy), so that a cache never hands a coded answer to a client that
 * cannot read it. Said on every such answer, whatever its size, so that its `304` says the same.
 */
const ACCEPT_ENCODING = "Accept-Encoding";

/**
 * GET/HEAD {base}/pets: a page, with `Link: rel="next"` when more follow, its `ETag`, and `304`
 * instead when `If-None-Match` names that tag. Over in-process storage, the same query asked again
 * before any write (a polled page) gets the last answer again without reading the storage: nothing
 * it was made from can have changed.
 */
export function listPetsResponse(handler: Handler, exchange: Exchange, rawQuery: string): Awaitable<PetStoreResponse> {
  const writes = handler.writeCount?.();
  const kept = handler.lastPage;
  if (writes !== undefined && kept.writes === writes && kept.query === rawQuery && kept.answer !== undefined) {
    return answerPage(exchange, kept.answer);
  }
  const query = listQuery(rawQuery);
  if (isRefusal(query)) return exchange.error(query);
  const page = handler.ops.listPets(query);
  if (isPromise(page)) return page.then((p) => pageResponse(handler, exchange, p));
  // Kept only over storage that counts its writes (it answers in this very tick, so the count holds).
  return pageResponse(handler, exchange, page, writes === undefined ? undefined : { query: rawQuery, writes });
}

/**
 * The page's answer, or its `304`: the shown page's again when this page is the very same (a polled
 * page costs no tag and no body), else decided from the pets' digests (the body is then not written).
 */
function pageResponse(
  handler: Handler,
  exchange: Exchange,
  page: PetPage,
  keep?: { query: string; writes: number },
): PetStoreResponse {
  const shown = handler.shownPage;
  let answer: PageAnswer;
  if (shown !== undefined && isShown(shown, page)) answer = shown.answer;
  else {
    const validator = pageValidator(handler.json, page);
    if (isNotModified(exchange.headers["if-none-match"], validator.etag)) {
      return exchange.notModified(validator.bytes, unchangedOf(handler, page, validator.etag));
    }
    answer = showPage(handler, page, validator);
  }
  if (keep !== undefined) {
    // Flat once: a kept page is written again and again, and a string in pieces is copied piece by piece each time.
    flat(answer.json.text);
    handler.lastPage = { ...keep, answer };
  }
  return answerPage(exchange, answer);
}

/**
 * A new page's answer, shown from now on: the next page that is the very same (the same pets in the
 * same order, the same limit, filter and next cursor), as a polled page is, gets it again.
 * (`buildPageAnswer` alone gives the same: test/lib/shown-page.test.ts.)
 */
function showPage(handler: Handler, page: PetPage, validator: PageValidator): PageAnswer {
  const answer = buildPageAnswer(handler, page, validator);
  const { limit, status, nextCursor } = page;
  handler.shownPage = { entries: validator.entries, limit, status, nextCursor, answer };
  return answer;
}

/** True when `page` is the shown one: the shown texts, in order, are its pets' texts. */
function isShown(shown: ShownPage, page: PetPage): boolean {
  if (shown.limit !== page.limit || shown.status !== page.status || shown.nextCursor !== page.nextCursor) return false;
  const { entries } = shown;
  const { pets } = page;
  if (entries.length !== pets.length) return false;
  for (let i = 0; i < pets.length; i++) if (!isTextOf(entries[i] as PetText, pets[i] as Pet)) return false;
  return true;
}

/** A page's body and headers, made from its pets' kept texts. */
function buildPageAnswer(handler: Handler, page: PetPage, validator: PageValidator): PageAnswer {
  const unchanged = unchangedOf(handler, page, validator.etag);
  const headers = page.nextCursor === undefined ? unchanged : { ...unchanged, link: linkOf(handler, page) };
  return { json: join(validator.entries, validator.bytes), headers, unchanged };
}

/** What a page's `304` says, and its `200` besides its `Link`. */
function unchangedOf(handler: Handler, page: PetPage, etag: string): PageAnswer["unchanged"] {
  const cacheControl = page.nextCursor === undefined ? handler.cachePolicy.lastPage : handler.cachePolicy.fullPage;
  return { etag, "cache-control": cacheControl, vary: ACCEPT_ENCODING };
}

/** A kept page's answer: the page, or its `304`. */
function answerPage(exchange: Exchange, answer: PageAnswer): PetStoreResponse {
  const { json, headers, unchanged } = answer;
  if (isNotModified(exchange.headers["if-none-match"], unchanged.etag)) {
    return exchange.notModified(json.bytes, unchanged);
  }
  return exchange.json(200, json, headers);
}

/** The `Link` to the page after this one. */
function linkOf(handler: Handler, page: PetPage): string {
  const status = page.status === undefined ? "" : `&status=${page.status}`;
  return `<${handler.collectionPath}?limit=${page.limit}${status}&cursor=${page.nextCursor}>; rel="next"`;
}

/**
 * GET/HEAD {base}/pets/{petId}: the pet, with the route's deprecation headers and its `ETag`, or
 * `304` when `If-None-Match` names that tag.
 */
export function getPetResponse(handler: Handler, exchange: Exchange, rawId: string): Awaitable<PetStoreResponse> {
  let id = rawId;
  try {
    id = decodeURIComponent(rawId);
  } catch {}
  const pet = handler.ops.getPet(id);
  return isPromise(pet) ? pet.then((p) => petResponse(handler, exchange, p)) : petResponse(handler, exchange, pet);
}

function petResponse(handler: Handler, exchange: Exchange, pet: Pet): PetStoreResponse {
  const { entry, etag } = petValidator(handler.json, pet);
  const bytes = entry.text.length + entry.extra;
  const cacheControl = handler.cachePolicy.pet;
  if (isNotModified(exchange.headers["if-none-match"], etag)) {
    return exchange.notModified(bytes, {
      ...handler.deprecation,
      etag,
      "cache-control": cacheControl,
      vary: ACCEPT_ENCODING,
    });
  }
  const response = exchange.json(200, { text: entry.text, bytes }, handler.deprecation);
  response.headers.etag = etag;
  response.headers["cache-control"] = cacheControl;
  response.headers.vary = ACCEPT_ENCODING;
  return response;
}

/**
 * The `Idempotency-Key` of a create with the caller's scope (a digest of the token), undefined
 * without one, or the refusal of a malformed, empty or repeated one.
 */
function idempotencyKey(exchange: Exchange): CheckedKey | Refusal | undefined {
  const header = exchange.headers["idempotency-key"];
  if (header === undefined) return undefined;
  const key = typeof header === "string" ? parseIdempotencyKey(header) : undefined;
  if (key === undefined) return refuse("invalid_idempotency_key");
  return { scope: scopeOf(exchange.token ?? ""), key };
}

/** POST {base}/pets: the idempotency key, the body's headers, then the body, then the pet. */
export function createPetResponse(handler: Handler, exchange: Exchange): Awaitable<PetStoreResponse> {
  const key = idempotencyKey(exchange);
  if (key !== undefined && isRefusal(key)) return exchange.error(key);
  const refusal = refusedBody(exchange.headers, handler.maxBodyBytes);
  if (refusal !== undefined) return exchange.error(refusal);
  return createFromBody(handler, exchange, key);
}

/**
 * Reads (or takes) the body and creates the pet (once per key, with one). Without a promise when
 * nothing has to wait (the body in hand, a store in process): a create then answers in the tick
 * it arrived in, as a page does.
 */
function createFromBody(
  handler: Handler,
  exchange: Exchange,
  key: CheckedKey | undefined,
): Awaitable<PetStoreResponse> {
  const raw = exchange.request.body;
  if (typeof raw !== "function") return createFromBytes(handler, exchange, key, raw);
  return raw(handler.maxBodyBytes).then((bytes) => createFromBytes(handler, exchange, key, bytes));
}

/** Parses the body and creates the pet: one step from bytes to response. */
function createFromBytes(
  handler: Handler,
  exchange: Exchange,
  key: CheckedKey | undefined,
  raw: Uint8Array | string | null | undefined,
): Awaitable<PetStoreResponse> {
  const body = parseJson(raw, handler.maxBodyBytes);
  if (isRefusal(body)) return exchange.error(body);
  const caller = { requestId: exchange.requestId, token: exchange.token, principal: exchange.principal };
  if (key === undefined) {
    const pet = handler.ops.createPet(body.value, caller);
    return isPromise(pet) ? pet.then((p) => created(handler, exchange, p)) : created(handler, exchange, pet);
  }
  const once = handler.ops.createPetOnce(body.value, key, caller);
  return isPromise(once) ? once.then((c) => createdOnce(handler, exchange, c)) : createdOnce(handler, exchange, once);
}

/** 201 with the new pet and its Location. */
function created(handler: Handler, exchange: Exchange, pet: Pet): PetStoreResponse {
  const location = `${handler.collectionPath}/${pet.id}`;
  return exchange.json(201, handler.json.created(pet), { location, "cache-control": handler.cachePolicy.created });
}

/**
 * The answer of an idempotent create: a new pet's, or a replay's with `Idempotent-Replayed: true`.
 * A replay's text is kept (`one`): a client that retries once tends to retry again.
 */
function createdOnce(handler: Handler, exchange: Exchange, once: { pet: Pet; replayed: boolean }): PetStoreResponse {
  if (!once.replayed) return created(handler, exchange, once.pet);
  const location = `${handler.collectionPath}/${once.pet.id}`;
  const headers = { location, "cache-control": handler.cachePolicy.created, "idempotent-replayed": "true" };
  return exchange.json(201, handler.json.one(once.pet), headers);
}
