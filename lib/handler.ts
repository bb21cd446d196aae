/**
 * The HTTP-neutral handler: one request in, one response out, for the whole HTTP contract. It
 * never throws or rejects: every input, however hostile, gets a response. The steps are the
 * contract's order of checks: `route` (404, 405), `authenticate` (401, 400), the scope (403), `limit` (429),
 * then the operation's response (`listPetsResponse`, `getPetResponse`, `createPetResponse`). An
 * address past its limit of failed authentications is refused (429) before all of them, without a span.
 */

import { createPetResponse, getPetResponse, listPetsResponse } from "./answers.ts";
import { CHALLENGES, readBearer } from "./auth/bearer.ts";
import { clientAddressOf } from "./auth/client-address.ts";
import type { Principal, Scope } from "./auth/principal.ts";
import { hasScope } from "./auth/principal.ts";
import type { Awaitable } from "./awaitable.ts";
import { isPromise } from "./awaitable.ts";
import { tooLarge } from "./body.ts";
import type { Cors } from "./cors.ts";
import { isPetStoreError, refuse } from "./errors.ts";
import type { Handler, HandlerOptions } from "./exchange.ts";
import { Exchange } from "./exchange.ts";
import type { PetStoreRequest, PetStoreResponse } from "./http.ts";
import { lowerCaseHeaders } from "./http.ts";
import type { JsonText } from "./json.ts";
import { PetJson } from "./json.ts";
import type { RequestObservation } from "./observe.ts";
import type { CoreOperations } from "./operations.ts";
import type { RateVerdict } from "./rate-limit.ts";
import { newRequestId, requestIdOf } from "./request-id.ts";
import type { AnsweredRequest, RequestSpan, Tracing } from "./tracing.ts";

export type { HandlerOptions } from "./exchange.ts";

type Route = { kind: "collection" } | { kind: "item"; rawId: string } | { kind: "public"; name: string };

const THROTTLED = "Too many failed authentications from this address. Wait the seconds of Retry-After, then try again.";
const ALLOW_COLLECTION = "GET, HEAD, POST";
const ALLOW_READ = "GET, HEAD";

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
function route(handler: Handler, path: string): Route | undefined {
  if (path === handler.collectionPath) return { kind: "collection" };
  if (path.startsWith(handler.itemPrefix)) {
    const rawId = path.slice(handler.itemPrefix.length);
    if (rawId === "" || rawId.includes("/")) return undefined;
    return { kind: "item", rawId };
  }
  if (path.startsWith(`${handler.basePath}/`)) {
    const name = path.slice(handler.basePath.length + 1);
    if (Object.hasOwn(handler.publicRoutes, name)) return { kind: "public", name };
  }
  return undefined;
}

/** The 500 response to anything unexpected, reported to onError. */
function unexpected(handler: Handler, exchange: Exchange, error: unknown): PetStoreResponse {
  try {
    handler.onError(error, exchange.request);
  } catch {}
  return exchange.error(refuse("internal_error"));
}

/**
 * The response to an error an operation threw or rejected with: the contract's response for a
 * PetStoreError, a 500 reported to onError for anything else. Never throws.
 */
function thrownResponse(
  handler: Handler,
  exchange: Exchange,
  error: unknown,
  headers?: Record<string, string>,
): PetStoreResponse {
  if (!isPetStoreError(error)) return unexpected(handler, exchange, error);
  if (error.code === "internal_error") {
    try {
      handler.onError(error, exchange.request);
    } catch {}
  }
  // An adapter's body reader refuses with the table's words: the answer names the limit, as every 413 does.
  if (error.code === "payload_too_large") return exchange.error(tooLarge(handler.maxBodyBytes), headers);
  return exchange.error(error, headers);
}

/**
 * The operation's response, with its failures (thrown or rejected) turned into responses too, and
 * the caller's id on it (for the adapter's log line).
 */
function settle(
  handler: Handler,
  exchange: Exchange,
  headers: Record<string, string> | undefined,
  operation: () => Awaitable<PetStoreResponse>,
): Awaitable<PetStoreResponse> {
  const principal = (exchange.principal as Principal).id;
  try {
    const response = operation();
    if (!isPromise(response)) return withPrincipal(response, principal);
    return response.then(
      (r) => withPrincipal(r, principal),
      (error: unknown) => withPrincipal(thrownResponse(handler, exchange, error, headers), principal),
    );
  } catch (error) {
    return withPrincipal(thrownResponse(handler, exchange, error, headers), principal);
  }
}

function withPrincipal(response: PetStoreResponse, principal: string): PetStoreResponse {
  response.principal = principal;
  return response;
}

/**
 * Step 2: the key or token, and the scope the operation needs. The operation's response when both
 * hold, else 401 (RFC 6750: no error attribute without credentials, `invalid_token` for bad ones),
 * 403 insufficient_scope, or 400 invalid_request for an Authorization given more than once.
 */
function authenticate(
  handler: Handler,
  exchange: Exchange,
  scope: Scope,
  operation: () => Awaitable<PetStoreResponse>,
  headers?: Record<string, string>,
): Awaitable<PetStoreResponse> {
  const credentials = readBearer(exchange.headers.authorization);
  if (credentials.kind === "repeated") {
    return exchange.error(refuse("invalid_request"), { ...headers, ...CHALLENGES.repeated });
  }
  if (credentials.kind === "missing") return unauthorized(exchange, headers, CHALLENGES.missing);
  if (credentials.kind === "invalid") return invalid(handler, exchange, headers);
  exchange.token = credentials.token;
  const found = handler.verify(credentials.token);
  if (!isPromise(found)) return admit(handler, exchange, found, scope, operation, headers);
  return found
    .then((principal) => admit(handler, exchange, principal, scope, operation, headers))
    .then(undefined, (error: unknown) => unexpected(handler, exchange, error)); // a verify that rejects
}

/** The verifiers' answer: 401 for a refusal (counted against the address), 403 without the scope, else on to the limit. */
function admit(
  handler: Handler,
  exchange: Exchange,
  principal: Principal | false,
  scope: Scope,
  operation: () => Awaitable<PetStoreResponse>,
  headers: Record<string, string> | undefined,
): Awaitable<PetStoreResponse> {
  if (principal === false) return invalid(handler, exchange, headers);
  exchange.principal = principal;
  if (!hasScope(principal, scope)) {
    const refusal = exchange.error(refuse("insufficient_scope"), { ...headers, ...CHALLENGES[scope] });
    return withPrincipal(refusal, principal.id);
  }
  return limit(handler, exchange, operation, headers);
}

/** 401 invalid_token for a bad key or token, counted against the client's address. */
function invalid(handler: Handler, exchange: Exchange, headers: Record<string, string> | undefined): PetStoreResponse {
  handler.failures?.failed(clientAddressOf(exchange.request, exchange.headers, handler.trustProxy === true));
  return unauthorized(exchange, headers, CHALLENGES.invalid);
}

/**
 * Step 3: the caller's rate limit, when the store has one: `429 rate_limited` over it, and its
 * headers on every answer of an admitted request, errors included.
 */
function limit(
  handler: Handler,
  exchange: Exchange,
  operation: () => Awaitable<PetStoreResponse>,
  headers?: Record<string, string>,
): Awaitable<PetStoreResponse> {
  const limiter = handler.rateLimiter;
  if (limiter === undefined) return settle(handler, exchange, headers, operation);
  const scope = (exchange.principal as Principal).id;
  const verdict = limiter.admit(scope);
  if (!isPromise(verdict)) return limited(handler, exchange, operation, headers, scope, verdict);
  return verdict
    .then((v) => limited(handler, exchange, operation, headers, scope, v))
    .then(undefined, (error: unknown) => unexpected(handler, exchange, error));
}

/** The answer once the limiter decided. */
function limited(
  handler: Handler,
  exchange: Exchange,
  operation: () => Awaitable<PetStoreResponse>,
  headers: Record<string, string> | undefined,
  scope: string,
  verdict: RateVerdict,
): Awaitable<PetStoreResponse> {
  const rate = verdict.headers;
  if (!verdict.allowed) {
    handler.onLimited?.(scope, verdict);
    return withPrincipal(exchange.error(refuse("rate_limited"), { ...headers, ...rate }), scope);
  }
  // Only a route with headers of its own (getPet's deprecation) needs them merged: no copy per request otherwise.
  const response = settle(handler, exchange, headers === undefined ? rate : { ...headers, ...rate }, operation);
  return isPromise(response) ? response.then((r) => withHeaders(r, rate)) : withHeaders(response, rate);
}

/** The answer with `headers` added. */
function withHeaders(response: PetStoreResponse, headers: Record<string, string>): PetStoreResponse {
  Object.assign(response.headers, headers);
  return response;
}

/** 401, with the challenge RFC 6750 asks for and the route's own headers. */
function unauthorized(
  exchange: Exchange,
  headers: Record<string, string> | undefined,
  challenge: Record<string, string>,
): PetStoreResponse {
  return exchange.error(refuse("unauthorized"), headers === undefined ? challenge : { ...headers, ...challenge });
}

/** A CORS preflight: `OPTIONS` asking (`Access-Control-Request-Method`) whether a page may call. */
function isPreflight(exchange: Exchange): boolean {
  return exchange.method === "OPTIONS" && exchange.headers["access-control-request-method"] !== undefined;
}

/** 204 to an allowed origin's preflight, before any key: the path's methods and the headers a page may send. */
function preflight(handler: Handler, exchange: Exchange, methods: string): PetStoreResponse {
  const cors = (handler.cors as Cors).preflightHeaders(exchange.cors as Record<string, string>, methods);
  return {
    status: 204,
    headers: {
      "cache-control": "no-store",
      "x-request-id": exchange.requestId,
      "x-content-type-options": "nosniff",
      ...cors,
    },
    body: "",
  };
}

/** The answer with the CORS headers of an allowed origin, and `no-transform` when the store says it on every answer. */
function finished(exchange: Exchange, response: PetStoreResponse, noTransform: boolean): PetStoreResponse {
  const { cors } = exchange;
  if (cors !== undefined) {
    const vary = response.headers.vary; // a pet's or a page's Accept-Encoding (a preflight's is the CORS one)
    withHeaders(response, cors);
    if (vary !== undefined && vary !== cors.vary) response.headers.vary = `${cors.vary}, ${vary}`;
  }
  if (noTransform) response.headers["cache-control"] += ", no-transform";
  return response;
}

/** What a request's span says of the request once it was answered. */
function answered(handler: Handler, exchange: Exchange): AnsweredRequest {
  const method = exchange.method || exchange.request.method;
  const route = exchange.route;
  let operation: string | undefined;
  if (route === handler.itemRoute) operation = "getPet";
  else if (route === handler.collectionPath) operation = method === "POST" ? "createPet" : "listPets";
  const path = target(exchange.request).path;
  const scheme = exchange.request.scheme ?? "http";
  return { method, route, operation, path, scheme, principal: exchange.principal?.id };
}

/** The steps in the contract's order: route and method, key, then the operation. */
function run(handler: Handler, exchange: Exchange): Awaitable<PetStoreResponse> {
  if (exchange.throttledFor !== undefined) {
    return exchange.error(refuse("rate_limited", THROTTLED), { "retry-after": String(exchange.throttledFor) });
  }
  const { path, query } = target(exchange.request);
  const found = route(handler, path);
  if (found === undefined) return exchange.error(refuse("not_found"));
  const collection = found.kind === "collection";
  exchange.route = collection ? handler.collectionPath : found.kind === "item" ? handler.itemRoute : path;
  const methods = collection ? ALLOW_COLLECTION : ALLOW_READ;
  if (exchange.cors !== undefined && isPreflight(exchange)) return preflight(handler, exchange, methods);
  if (exchange.method !== "GET" && !exchange.head && !(collection && exchange.method === "POST")) {
    return exchange.error(refuse("method_not_allowed"), { allow: methods });
  }
  switch (found.kind) {
    case "public":
      return exchange.json(200, (handler.publicRoutes[found.name] as () => JsonText)());
    case "item":
      return authenticate(
        handler,
        exchange,
        "pets:read",
        () => getPetResponse(handler, exchange, found.rawId),
        handler.deprecation,
      );
    default:
      return exchange.method === "POST"
        ? authenticate(handler, exchange, "pets:write", () => createPetResponse(handler, exchange))
        : authenticate(handler, exchange, "pets:read", () => listPetsResponse(handler, exchange, query));
  }
}

/**
 * Builds the handler of a store: `respond` answers without a promise when nothing had to wait,
 * `handle` always with one. Neither throws nor rejects.
 */
export function createHandler(ops: CoreOperations, options: HandlerOptions) {
  const collectionPath = `${options.basePath}/pets`;
  const handler: Handler = {
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
    lastPage: { query: "", writes: -1, answer: undefined },
    shownPage: undefined,
  };

  const cors = options.cors;
  const noTransform = options.cachePolicy.noTransform;
  function answer(exchange: Exchange): Awaitable<PetStoreResponse> {
    try {
      const request = exchange.request;
      exchange.headers = lowerCaseHeaders(request.headers);
      exchange.requestId = requestIdOf(exchange.headers["x-request-id"]);
      const method = request.method;
      // Node's parser and fetch give upper case already: the usual methods skip the conversion.
      exchange.method = method === "GET" || method === "POST" || method === "HEAD" ? method : method.toUpperCase();
      exchange.head = exchange.method === "HEAD";
      if (cors !== undefined) exchange.cors = cors.answerHeaders(exchange.headers.origin);
    } catch (error) {
      exchange.requestId ||= newRequestId();
      return unexpected(handler, exchange, error);
    }
    const response = guardedRun(exchange);
    if (exchange.cors === undefined && !noTransform) return response;
    return isPromise(response)
      ? response.then((r) => finished(exchange, r, noTransform))
      : finished(exchange, response, noTransform);
  }

  function guardedRun(exchange: Exchange): Awaitable<PetStoreResponse> {
    try {
      return run(handler, exchange);
    } catch (error) {
      return unexpected(handler, exchange, error);
    }
  }

  const observe = options.observe;
  const report = (exchange: Exchange, started: number, response: PetStoreResponse): PetStoreResponse => {
    const observation: RequestObservation = {
      kind: "request",
      method: exchange.method,
      route: exchange.route,
      status: response.status,
      durationMs: performance.now() - started,
      requestId: exchange.requestId,
    };
    if (exchange.traceId !== undefined) observation.traceId = exchange.traceId;
    if (exchange.principal !== undefined) observation.principal = exchange.principal.id;
    (observe as NonNullable<typeof observe>)(observation);
    return response;
  };
  // Without an observer, no clock is read and no promise is added.
  const answerObserved =
    observe === undefined
      ? answer
      : (exchange: Exchange): Awaitable<PetStoreResponse> => {
          const started = performance.now();
          const response = answer(exchange);
          return isPromise(response)
            ? response.then((r) => report(exchange, started, r))
            : report(exchange, started, response);
        };

  const tracing = options.tracing;
  const failures = options.failures;
  function respond(request: PetStoreRequest): Awaitable<PetStoreResponse> {
    const exchange = new Exchange(request);
    // Only while some address is refused is the request's looked at: a refused one makes no span.
    if (failures?.blocking === true) {
      exchange.throttledFor = throttledFor(request);
      if (exchange.throttledFor !== undefined) return answerObserved(exchange);
    }
    if (tracing?.on === true) return traced(tracing, exchange);
    return answerObserved(exchange);
  }

  /** Seconds the request's address must wait, when it passed its limit of failed authentications. */
  function throttledFor(request: PetStoreRequest): number | undefined {
    try {
      const headers = handler.trustProxy === true ? lowerCaseHeaders(request.headers) : {};
      return failures?.blockedSeconds(clientAddressOf(request, headers, handler.trustProxy === true));
    } catch {
      return undefined; // headers a getter throws on: the request goes on, and gets its own 500
    }
  }

  /** The answer within the request's span (with @opentelemetry/api installed; nothing more when no provider records). */
  function traced(tracing: Tracing, exchange: Exchange): Awaitable<PetStoreResponse> {
    const request = exchange.request;
    let span: RequestSpan | undefined;
    try {
      span = tracing.startRequest(request);
    } catch (error) {
      handler.onError(error, request); // a tracer that throws costs the span, never the answer
    }
    if (span === undefined) return answerObserved(exchange);
    const open = span;
    const traceId = open.span.spanContext().traceId;
    exchange.traceId = traceId;
    const end = (response: PetStoreResponse) => {
      response.traceId = traceId;
      try {
        tracing.endRequest(open, answered(handler, exchange), response);
      } catch (error) {
        handler.onError(error, request);
      }
      return response;
    };
    const response = tracing.within(open, () => answerObserved(exchange));
    return isPromise(response) ? response.then(end) : end(response);
  }

  function handle(request: PetStoreRequest): Promise<PetStoreResponse> {
    const response = respond(request);
    return isPromise(response) ? response : Promise.resolve(response);
  }

  return { handle, respond };
}
