/**
 * The HTTP-neutral handler: one request in, one response out, for the whole HTTP contract. It
 * never throws or rejects: every input, however hostile, gets a response. The steps are the
 * contract's order of checks, each a named function below: `route`, `authenticate`, then the
 * operation's response (`listPetsResponse`, `getPetResponse`, `createPetResponse`).
 */
import type { VerifyToken } from "./auth.ts";
import { readBearer } from "./auth.ts";
import type { Awaitable } from "./awaitable.ts";
import { isPromise } from "./awaitable.ts";
import { first, parseJson, refusedBody } from "./body.ts";
import type { Refusal } from "./errors.ts";
import { isPetStoreError, isRefusal, refuse } from "./errors.ts";
import type { HeaderValue, PetStoreRequest, PetStoreResponse } from "./http.ts";
import { parseIdempotencyKey, scopeOf } from "./idempotency.ts";
import { flat, PetJson } from "./json.ts";
import type { RequestObservation } from "./observe.ts";
import type { CheckedKey, CoreOperations, PetPage } from "./operations.ts";
import { REQUEST_ID_PATTERN } from "./patterns.ts";
import { listQuery } from "./query.ts";
import { newRequestId } from "./request-id.ts";
import { errorResponse, jsonResponse } from "./response.ts";
import type { Pet } from "./schemas.ts";

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
  /** Called with each answered request (made safe by the store: it never throws). */
  observe?: ((observation: RequestObservation) => void) | undefined;
}

/** What every step reads: the options and what is derived from them once. */
interface Handler extends HandlerOptions {
  ops: CoreOperations;
  json: PetJson;
  collectionPath: string;
  itemPrefix: string;
  /** The item route's template, "{base}/pets/{petId}". */
  itemRoute: string;
  /** The headers every getPet response carries (its deprecation). */
  deprecation: Record<string, string>;
  publicRoutes: Readonly<Record<string, () => { contentType: string; body: string }>>;
  /** The last `Link: rel="next"` header written, by its page's limit, status and next cursor. */
  lastLink: { limit: number; status: string | undefined; cursor: string; headers: Record<string, string> };
}

/** One request on its way through the steps: what they read of it, computed once. */
interface Exchange {
  request: PetStoreRequest;
  headers: Readonly<Record<string, HeaderValue>>;
  method: string;
  head: boolean;
  requestId: string;
  /** The accepted bearer token, once authenticated: only ever turned into a scope (lib/rules.ts). */
  token?: string;
  /** The template of the route the path matched (for observers), once step 1 found one. */
  route: string | undefined;
}

type Route = { kind: "collection" } | { kind: "item"; rawId: string } | { kind: "public"; name: string } | undefined;

const CHALLENGE_MISSING = 'Bearer realm="petstore"';
const CHALLENGE_INVALID = 'Bearer realm="petstore", error="invalid_token"';
const ALLOW_COLLECTION = "GET, HEAD, POST";
const ALLOW_ITEM = "GET, HEAD";
const UPPER = /[A-Z]/;

/**
 * The request id of a response: the client's `X-Request-Id` when it is 1 to 128 characters of
 * `[A-Za-z0-9._-]`, otherwise a new random one.
 */
export function requestIdOf(header: HeaderValue): string {
  const value = first(header);
  return value !== undefined && REQUEST_ID_PATTERN.test(value) ? value : newRequestId();
}

/**
 * The headers with lower-case names, at the edge, once (as Apollo's HeaderMap does): the same
 * object when they already are (Node's always are). Two names that differ only in case become one
 * repeated header.
 */
export function lowerCaseHeaders(
  headers: Readonly<Record<string, HeaderValue>>,
): Readonly<Record<string, HeaderValue>> {
  let upper = false;
  for (const name in headers) {
    if (UPPER.test(name)) {
      upper = true;
      break;
    }
  }
  if (!upper) return headers;
  const lower: Record<string, HeaderValue> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const seen = lower[key];
    lower[key] = seen === undefined ? value : ([] as string[]).concat(seen, value);
  }
  return lower;
}

/** The path and the raw query string (without "?") of a request. */
function target(request: PetStoreRequest): { path: string; query: string } {
  let path = request.path;
  let query = request.query ?? request.search ?? "";
  const q = path.indexOf("?");
  if (q !== -1) {
    // A path carrying its query (deprecated, still served) when no query field is given.
    if (request.query == null && request.search == null) query = path.slice(q + 1);
    path = path.slice(0, q);
  }
  if (query.startsWith("?")) query = query.slice(1);
  return { path, query };
}

/** Step 1: which route a path names, or undefined (404). */
function route(h: Handler, path: string): Route {
  if (path === h.collectionPath) return { kind: "collection" };
  if (path.startsWith(h.itemPrefix)) {
    const rawId = path.slice(h.itemPrefix.length);
    if (rawId === "" || rawId.includes("/")) return undefined;
    return { kind: "item", rawId };
  }
  if (path.startsWith(`${h.basePath}/`)) {
    const name = path.slice(h.basePath.length + 1);
    if (Object.hasOwn(h.publicRoutes, name)) return { kind: "public", name };
  }
  return undefined;
}

/** 401, with the challenge RFC 6750 asks for. */
function unauthorized(h: Handler, x: Exchange, missing: boolean, isItem: boolean): PetStoreResponse {
  const challenge = missing ? CHALLENGE_MISSING : CHALLENGE_INVALID;
  return errorResponse(refuse("unauthorized"), x.head, x.requestId, {
    ...(isItem ? h.deprecation : undefined),
    "www-authenticate": challenge,
  });
}

/** The 500 response to anything unexpected, reported to onError. */
function unexpected(h: Handler, x: Exchange, error: unknown): PetStoreResponse {
  try {
    h.onError(error, x.request);
  } catch {}
  return errorResponse(refuse("internal_error"), x.head, x.requestId);
}

/**
 * The response to an error an operation threw or rejected with: the contract's response for a
 * PetStoreError, a 500 reported to onError for anything else. Never throws.
 */
function thrownResponse(h: Handler, x: Exchange, error: unknown, extra?: Record<string, string>): PetStoreResponse {
  if (!isPetStoreError(error)) return unexpected(h, x, error);
  if (error.code === "internal_error") {
    try {
      h.onError(error, x.request);
    } catch {}
  }
  return errorResponse(error, x.head, x.requestId, extra);
}

/** The response an operation will give, with its failures turned into responses too. */
function settle(
  h: Handler,
  x: Exchange,
  response: Awaitable<PetStoreResponse>,
  extra?: Record<string, string>,
): Awaitable<PetStoreResponse> {
  if (!isPromise(response)) return response;
  return response.then(undefined, (error: unknown) => thrownResponse(h, x, error, extra));
}

/** GET/HEAD {base}/pets: a page, with `Link: rel="next"` when more follow. */
function listPetsResponse(h: Handler, x: Exchange, rawQuery: string): Awaitable<PetStoreResponse> {
  const query = listQuery(rawQuery);
  if (isRefusal(query)) return errorResponse(query, x.head, x.requestId);
  const page = h.ops.listPets(query);
  return isPromise(page) ? page.then((p) => pageResponse(h, x, p)) : pageResponse(h, x, page);
}

function pageResponse(h: Handler, x: Exchange, page: PetPage): PetStoreResponse {
  const cursor = page.nextCursor;
  if (cursor === undefined) return jsonResponse(200, h.json.many(page.pets), x.head, x.requestId);
  let last = h.lastLink;
  // The polled first page has the same next page each time: its header is written once.
  if (last.cursor !== cursor || last.limit !== page.limit || last.status !== page.status) {
    const status = page.status === undefined ? "" : `&status=${page.status}`;
    // Flat: Node checks every header value with a regular expression, slower on a string in pieces.
    const link = flat(`<${h.collectionPath}?limit=${page.limit}${status}&cursor=${cursor}>; rel="next"`);
    last = h.lastLink = { limit: page.limit, status: page.status, cursor, headers: Object.freeze({ link }) };
  }
  return jsonResponse(200, h.json.many(page.pets), x.head, x.requestId, last.headers);
}

/** GET/HEAD {base}/pets/{petId}: the pet, with the route's deprecation headers. */
function getPetResponse(h: Handler, x: Exchange, rawId: string): Awaitable<PetStoreResponse> {
  let id = rawId;
  try {
    id = decodeURIComponent(rawId);
  } catch {}
  const pet = h.ops.getPet(id);
  return isPromise(pet)
    ? pet.then((p) => jsonResponse(200, h.json.one(p), x.head, x.requestId, h.deprecation))
    : jsonResponse(200, h.json.one(pet), x.head, x.requestId, h.deprecation);
}

/**
 * The `Idempotency-Key` of a create with the caller's scope (a digest of the token), undefined
 * without one, or the refusal of a malformed, empty or repeated one.
 */
function idempotencyKey(x: Exchange, token: string): CheckedKey | Refusal | undefined {
  const header = x.headers["idempotency-key"];
  if (header === undefined) return undefined;
  const key = typeof header === "string" ? parseIdempotencyKey(header) : undefined;
  if (key === undefined) return refuse("invalid_idempotency_key");
  return { scope: scopeOf(token), key };
}

/**
 * POST {base}/pets: the idempotency key, the body's headers, then the body, then the pet. A
 * promise it returns never rejects.
 */
function createPetResponse(h: Handler, x: Exchange): Awaitable<PetStoreResponse> {
  const key = idempotencyKey(x, x.token ?? "");
  if (key !== undefined && isRefusal(key)) return errorResponse(key, x.head, x.requestId);
  const refusal = refusedBody(x.headers, h.maxBodyBytes);
  if (refusal !== undefined) return errorResponse(refusal, x.head, x.requestId);
  return createFromBody(h, x, key);
}

/** Reads (or takes) the body and creates the pet (once per key, with one), in one async step from bytes to response. */
async function createFromBody(h: Handler, x: Exchange, key: CheckedKey | undefined): Promise<PetStoreResponse> {
  try {
    const raw = x.request.body;
    const body = parseJson(typeof raw === "function" ? await raw(h.maxBodyBytes) : raw, h.maxBodyBytes);
    if (isRefusal(body)) return errorResponse(body, x.head, x.requestId);
    let pet: Pet;
    let replayed = false;
    const caller = { requestId: x.requestId, token: x.token };
    if (key === undefined) pet = await h.ops.createPet(body.value, caller);
    else ({ pet, replayed } = await h.ops.createPetOnce(body.value, key, caller));
    const location = `${h.collectionPath}/${pet.id}`;
    // Not cached: most new pets are not read back soon, and a cache entry a create costs more than it saves.
    return jsonResponse(
      201,
      h.json.one(pet, false),
      false,
      x.requestId,
      replayed ? { location, "idempotent-replayed": "true" } : { location },
    );
  } catch (error) {
    return thrownResponse(h, x, error);
  }
}

/** Step 2: the key. The operation's response when it is accepted, else 401. */
function authenticate(
  h: Handler,
  x: Exchange,
  isItem: boolean,
  operation: () => Awaitable<PetStoreResponse>,
): Awaitable<PetStoreResponse> {
  const credentials = readBearer(x.headers.authorization);
  if (credentials.kind !== "bearer") return unauthorized(h, x, credentials.kind === "missing", isItem);
  const verdict = h.verify(credentials.token);
  x.token = credentials.token;
  if (typeof verdict === "boolean") return verdict ? operation() : unauthorized(h, x, false, isItem);
  return Promise.resolve(verdict)
    .then((ok) => (ok === true ? operation() : unauthorized(h, x, false, isItem)))
    .then(undefined, (error: unknown) => unexpected(h, x, error)); // a verify that rejects
}

/** The steps in the contract's order: route and method, key, then the operation. */
function run(h: Handler, x: Exchange): Awaitable<PetStoreResponse> {
  const { path, query } = target(x.request);
  const found = route(h, path);
  if (found === undefined) return errorResponse(refuse("not_found"), x.head, x.requestId);
  x.route = found.kind === "collection" ? h.collectionPath : found.kind === "item" ? h.itemRoute : path;
  const { method, head } = x;
  if (found.kind === "public") {
    if (method !== "GET" && !head)
      return errorResponse(refuse("method_not_allowed"), x.head, x.requestId, { allow: ALLOW_ITEM });
    const doc = (h.publicRoutes[found.name] as () => { contentType: string; body: string })();
    return jsonResponse(200, doc.body, head, x.requestId, undefined, doc.contentType);
  }
  if (found.kind === "item") {
    if (method !== "GET" && !head)
      return errorResponse(refuse("method_not_allowed"), x.head, x.requestId, { allow: ALLOW_ITEM });
    const rawId = found.rawId;
    return authenticate(h, x, true, () => {
      try {
        return settle(h, x, getPetResponse(h, x, rawId), h.deprecation);
      } catch (error) {
        return thrownResponse(h, x, error, h.deprecation);
      }
    });
  }
  if (method === "POST") return authenticate(h, x, false, () => createPetResponse(h, x));
  if (method !== "GET" && !head)
    return errorResponse(refuse("method_not_allowed"), x.head, x.requestId, { allow: ALLOW_COLLECTION });
  return authenticate(h, x, false, () => {
    try {
      return settle(h, x, listPetsResponse(h, x, query));
    } catch (error) {
      return thrownResponse(h, x, error);
    }
  });
}

/**
 * Builds the handler of a store: `respond` answers without a promise when nothing had to wait,
 * `handle` always with one. Neither throws nor rejects.
 */
export function createHandler(ops: CoreOperations, options: HandlerOptions) {
  const collectionPath = `${options.basePath}/pets`;
  const h: Handler = {
    ...options,
    ops,
    json: new PetJson(),
    collectionPath,
    itemPrefix: `${collectionPath}/`,
    itemRoute: `${collectionPath}/{petId}`,
    deprecation: {
      deprecation: `@${options.deprecatedAt}`,
      sunset: options.sunset.toUTCString(),
      link: `<${collectionPath}>; rel="successor-version"`,
    },
    publicRoutes: options.publicRoutes ?? {},
    lastLink: { limit: 0, status: undefined, cursor: "", headers: {} },
  };

  function answer(request: PetStoreRequest, x: Exchange): Awaitable<PetStoreResponse> {
    try {
      x.headers = lowerCaseHeaders(request.headers);
      x.requestId = requestIdOf(x.headers["x-request-id"]);
      x.method = request.method.toUpperCase();
      x.head = x.method === "HEAD";
      return run(h, x);
    } catch (error) {
      x.requestId ||= requestIdOf(undefined);
      return unexpected(h, x, error);
    }
  }

  const exchange = (request: PetStoreRequest): Exchange => ({
    request,
    headers: {},
    method: "",
    head: false,
    requestId: "",
    route: undefined,
  });

  const observe = options.observe;
  const report = (x: Exchange, started: number, response: PetStoreResponse): PetStoreResponse => {
    (observe as NonNullable<typeof observe>)({
      kind: "request",
      method: x.method,
      route: x.route,
      status: response.status,
      durationMs: performance.now() - started,
      requestId: x.requestId,
    });
    return response;
  };
  // Without an observer, no clock is read and no promise is added: the fast path stays as it is.
  // With one, no closure on the synchronous path (under tsx each one costs a property definition).
  const respond =
    observe === undefined
      ? (request: PetStoreRequest): Awaitable<PetStoreResponse> => answer(request, exchange(request))
      : (request: PetStoreRequest): Awaitable<PetStoreResponse> => {
          const started = performance.now();
          const x = exchange(request);
          const response = answer(request, x);
          return isPromise(response) ? response.then((r) => report(x, started, r)) : report(x, started, response);
        };

  function handle(request: PetStoreRequest): Promise<PetStoreResponse> {
    const response = respond(request);
    return isPromise(response) ? response : Promise.resolve(response);
  }

  return { handle, respond };
}
