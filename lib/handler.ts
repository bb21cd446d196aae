/**
 * The HTTP-neutral handler: one request in, one response out, for the whole HTTP contract
 * (routing, auth, content checks, operations, headers). It never rejects: every input,
 * however hostile, resolves to a response. Adapters only copy requests in and answers out.
 */
import { randomUUID } from "node:crypto";
import type { VerifyToken } from "./auth.ts";
import { readBearer } from "./auth.ts";
import { first, parseJson, refusedBody } from "./body.ts";
import { isPetStoreError, isRefusal, refuse } from "./errors.ts";
import { PetJson } from "./json.ts";
import type { CoreOperations, PetPage } from "./operations.ts";
import { listQuery } from "./query.ts";
import { fail, respond } from "./response.ts";
import type { Pet } from "./schemas.ts";
import type { Awaitable } from "./storage/port.ts";
import { isPromise } from "./storage/port.ts";

/** Reads the body on demand, refusing (PetStoreError `payload_too_large`) past `limit` bytes. */
export type BodyReader = (limit: number) => Promise<Uint8Array | string>;

export type HeaderValue = string | string[] | undefined;

/** A request as any adapter can build it. Header names must be lower-case. */
export interface PetStoreRequest {
  method: string;
  /** The path, e.g. "/v1/pets"; may carry the query string when `query`/`search` is not given. */
  path: string;
  /** The raw query string, with or without its leading "?". `search` is an alias. */
  query?: string | null | undefined;
  search?: string | null | undefined;
  headers: Readonly<Record<string, HeaderValue>>;
  /** The body: bytes, text, or a reader called only once the request is allowed to send one. */
  body?: Uint8Array | string | BodyReader | null | undefined;
}

export interface PetStoreResponse {
  status: number;
  /** Lower-case header names. `content-length` is always set (for HEAD, that of the GET body). */
  headers: Record<string, string>;
  /** JSON text, or "" (always "" for HEAD). */
  body: string;
}

export interface HandlerOptions {
  basePath: string;
  maxBodyBytes: number;
  verify: VerifyToken;
  /** Unix seconds of the getPet deprecation (RFC 9745 `Deprecation: @<seconds>`). */
  deprecatedAt: number;
  sunset: Date;
  /** Extra routes under the base path served without a key (e.g. the OpenAPI document). */
  publicRoutes?: Readonly<Record<string, () => { contentType: string; body: string }>>;
  onError: (error: unknown, request: PetStoreRequest) => void;
  /** True when a pet never changes once stored (the memory storage): its JSON text is cached by id. */
  stablePets?: boolean;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The request id of an answer: the client's `X-Request-Id` when it is 1 to 128 characters of
 * `[A-Za-z0-9._-]`, otherwise a new random one. Adapters that log use it so that the log line
 * and the answer carry the same id.
 */
export function requestIdOf(header: HeaderValue): string {
  const value = first(header);
  return value !== undefined && REQUEST_ID.test(value) ? value : randomUUID();
}
const CHALLENGE_MISSING = 'Bearer realm="petstore"';
const CHALLENGE_INVALID = 'Bearer realm="petstore", error="invalid_token"';
const ALLOW_COLLECTION = "GET, HEAD, POST";
const ALLOW_ITEM = "GET, HEAD";

type Route = { kind: "collection" } | { kind: "item"; rawId: string } | { kind: "public"; name: string } | undefined;

export function createHandler(ops: CoreOperations, options: HandlerOptions) {
  const { basePath, maxBodyBytes, verify, publicRoutes = {} } = options;
  const json = new PetJson(options.stablePets === true);
  const collectionPath = `${basePath}/pets`;
  const itemPrefix = `${collectionPath}/`;
  const deprecation: Record<string, string> = {
    deprecation: `@${options.deprecatedAt}`,
    sunset: options.sunset.toUTCString(),
    link: `<${collectionPath}>; rel="successor-version"`,
  };

  function route(path: string): Route {
    if (path === collectionPath) return { kind: "collection" };
    if (path.startsWith(itemPrefix)) {
      const rawId = path.slice(itemPrefix.length);
      if (rawId === "" || rawId.includes("/")) return undefined;
      return { kind: "item", rawId };
    }
    if (path.startsWith(`${basePath}/`)) {
      const name = path.slice(basePath.length + 1);
      if (Object.hasOwn(publicRoutes, name)) return { kind: "public", name };
    }
    return undefined;
  }

  function nextLink(page: PetPage): Record<string, string> | undefined {
    if (page.nextCursor === undefined) return undefined;
    const status = page.status === undefined ? "" : `&status=${page.status}`;
    return { link: `<${collectionPath}?limit=${page.limit}${status}&cursor=${page.nextCursor}>; rel="next"` };
  }

  /**
   * The answer to an error an operation threw or rejected with: the contract's answer for a
   * PetStoreError, a 500 reported to onError for anything else. Never throws, so a promise that
   * ends with it never rejects.
   */
  function settled(
    error: unknown,
    request: PetStoreRequest,
    head: boolean,
    requestId: string,
    extra: Record<string, string> | undefined,
  ): PetStoreResponse {
    if (!isPetStoreError(error)) return unexpected(error, request, requestId);
    if (error.code === "internal_error") {
      try {
        options.onError(error, request);
      } catch {}
    }
    return fail(error, head, requestId, extra);
  }

  // No named closure is made per request below: tsx (`npm start`) names each one with
  // Object.defineProperty, which costs about a microsecond. Callbacks are inline arrows.

  /** The answer to an authorised request (a PetStoreError it throws is answered here too). */
  function operate(
    request: PetStoreRequest,
    target: { kind: "collection" } | { kind: "item"; rawId: string },
    method: string,
    rawQuery: string,
    requestId: string,
  ): Awaitable<PetStoreResponse> {
    const head = method === "HEAD";
    const extra = target.kind === "item" ? deprecation : undefined;
    try {
      let answer: Awaitable<PetStoreResponse>;
      if (target.kind === "item") {
        let rawId = target.rawId;
        try {
          rawId = decodeURIComponent(rawId);
        } catch {}
        const pet = ops.find(rawId);
        answer = isPromise(pet)
          ? pet.then((p) => respond(200, json.one(p), head, requestId, extra))
          : respond(200, json.one(pet), head, requestId, extra);
      } else if (method === "POST") {
        return createPet(request, requestId); // answers every outcome itself: nothing to add
      } else {
        const query = listQuery(rawQuery);
        if (isRefusal(query)) return fail(query, head, requestId);
        const page = ops.page(query.status, query.limit, query.cursor);
        answer = isPromise(page) ? page.then((p) => listAnswer(p, head, requestId)) : listAnswer(page, head, requestId);
      }
      if (!isPromise(answer)) return answer;
      return answer.then(undefined, (error: unknown) => settled(error, request, head, requestId, extra));
    } catch (error) {
      return settled(error, request, head, requestId, extra);
    }
  }

  function listAnswer(page: PetPage, head: boolean, requestId: string): PetStoreResponse {
    return respond(200, json.many(page.pets), head, requestId, nextLink(page));
  }

  /** 401, with the challenge RFC 6750 asks for. */
  function unauthorized(missing: boolean, isItem: boolean, head: boolean, requestId: string): PetStoreResponse {
    const challenge = missing ? CHALLENGE_MISSING : CHALLENGE_INVALID;
    const extra = isItem ? deprecation : undefined;
    return fail(refuse("unauthorized"), head, requestId, { ...extra, "www-authenticate": challenge });
  }

  /**
   * POST: the body, then the pet. A promise it returns never rejects. The body, read or given,
   * goes to the answer in one async step: each promise resolved with another promise costs two
   * more turns of the microtask queue.
   */
  function createPet(request: PetStoreRequest, requestId: string): Awaitable<PetStoreResponse> {
    const refused = refusedBody(request.headers, maxBodyBytes);
    if (refused !== undefined) return fail(refused, false, requestId);
    return createFrom(request.body, request, requestId);
  }

  async function createFrom(
    raw: PetStoreRequest["body"],
    request: PetStoreRequest,
    requestId: string,
  ): Promise<PetStoreResponse> {
    try {
      const body = parseJson(typeof raw === "function" ? await raw(maxBodyBytes) : raw, maxBodyBytes);
      if (isRefusal(body)) return fail(body, false, requestId);
      return createdAnswer(await ops.create(body.value), requestId);
    } catch (error) {
      return settled(error, request, false, requestId, undefined);
    }
  }

  function createdAnswer(pet: Pet, requestId: string): PetStoreResponse {
    // Not cached: most new pets are not read back soon, and a cache entry a create costs more than it saves.
    return respond(201, json.one(pet, false), false, requestId, { location: `${collectionPath}/${pet.id}` });
  }

  /** Routing, the method, the key; then `operate`. Synchronous as long as nothing has to wait. */
  function run(request: PetStoreRequest, requestId: string): Awaitable<PetStoreResponse> {
    let path = request.path;
    let rawQuery = request.query ?? request.search ?? "";
    const q = path.indexOf("?");
    if (q !== -1) {
      if (request.query == null && request.search == null) rawQuery = path.slice(q + 1);
      path = path.slice(0, q);
    }
    if (rawQuery.startsWith("?")) rawQuery = rawQuery.slice(1);

    const method = request.method.toUpperCase();
    const head = method === "HEAD";
    const target = route(path);
    if (target === undefined) return fail(refuse("not_found"), head, requestId);
    if (target.kind === "public") {
      if (method !== "GET" && !head) {
        return fail(refuse("method_not_allowed"), head, requestId, { allow: ALLOW_ITEM });
      }
      const doc = (publicRoutes[target.name] as () => { contentType: string; body: string })();
      return respond(200, doc.body, head, requestId, undefined, doc.contentType);
    }
    const isItem = target.kind === "item";
    const allowed = isItem ? method === "GET" || head : method === "GET" || head || method === "POST";
    if (!allowed) {
      return fail(refuse("method_not_allowed"), head, requestId, {
        allow: isItem ? ALLOW_ITEM : ALLOW_COLLECTION,
      });
    }

    const credentials = readBearer(request.headers.authorization);
    if (credentials.kind !== "bearer") return unauthorized(credentials.kind === "missing", isItem, head, requestId);
    const verdict = verify(credentials.token);
    if (typeof verdict === "boolean") {
      return verdict
        ? operate(request, target, method, rawQuery, requestId)
        : unauthorized(false, isItem, head, requestId);
    }
    return Promise.resolve(verdict)
      .then((ok) =>
        ok === true
          ? operate(request, target, method, rawQuery, requestId)
          : unauthorized(false, isItem, head, requestId),
      )
      .then(undefined, (error: unknown) => unexpected(error, request, requestId)); // a verify that rejects
  }

  /** The 500 answer to anything unexpected, reported to onError. */
  function unexpected(error: unknown, request: PetStoreRequest, requestId: string): PetStoreResponse {
    try {
      options.onError(error, request);
    } catch {}
    return fail(refuse("internal_error"), request?.method === "HEAD", requestId);
  }

  /**
   * Answers one request: at once when nothing has to wait, else a promise. Never throws or
   * rejects: every promise `run` returns ends in `settled` or `unexpected`, which answer anything.
   */
  function answerNow(request: PetStoreRequest): Awaitable<PetStoreResponse> {
    let requestId = "";
    try {
      requestId = requestIdOf(request?.headers?.["x-request-id"]);
      return run(request, requestId);
    } catch (error) {
      return unexpected(error, request, requestId || requestIdOf(undefined));
    }
  }

  /** Answers one request. Never rejects. */
  function handle(request: PetStoreRequest): Promise<PetStoreResponse> {
    const answer = answerNow(request);
    return isPromise(answer) ? answer : Promise.resolve(answer);
  }

  return { handle, answerNow };
}

/**
 * Where a store keeps `answerNow`, for this package's adapters: the answer without a promise when
 * nothing had to wait (a page from memory), so that it is written in the same tick.
 */
export const ANSWER_NOW: unique symbol = Symbol("petstore.answerNow");

export type AnswerNow = (request: PetStoreRequest) => Awaitable<PetStoreResponse>;

export type Handle = (request: PetStoreRequest) => Promise<PetStoreResponse>;
