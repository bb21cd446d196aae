/**
 * What the handler's steps share: the store's options and what is derived from them once
 * (`Handler`), and one request on its way through the steps, with its answers (`Exchange`, a
 * `Responder` that also knows the request, its headers, method, token, route and CORS headers).
 */
import type { FindPrincipal, Principal } from "./auth/principal.ts";
import type { FailureThrottle } from "./auth/throttle.ts";
import type { CachePolicy } from "./cache-control.ts";
import type { Cors } from "./cors.ts";
import type { HeaderValue, PetStoreRequest } from "./http.ts";
import type { JsonText, PetJson, PetText } from "./json.ts";
import type { RequestObservation } from "./observe.ts";
import type { CoreOperations } from "./operations.ts";
import type { RateLimiter, RateVerdict } from "./rate-limit.ts";
import { Responder } from "./response.ts";
import type { PetStatus } from "./schemas.ts";
import type { Tracing } from "./tracing.ts";

export interface HandlerOptions {
  basePath: string;
  maxBodyBytes: number;
  /** Who a token is: its principal, or false (./auth/option.ts). */
  verify: FindPrincipal;
  /** Unix seconds of the getPet deprecation (RFC 9745 `Deprecation: @<seconds>`). */
  deprecatedAt: number;
  sunset: Date;
  /** Documents under the base path served without a key (the OpenAPI document), by name. */
  publicRoutes?: Readonly<Record<string, () => JsonText>>;
  onError: (error: unknown, request: PetStoreRequest) => void;
  /** Called with each answered request (made safe by the store: it never throws). */
  observe?: ((observation: RequestObservation) => void) | undefined;
  /** The CORS policy, when browser pages of other origins may call the API. */
  cors?: Cors | undefined;
  /** The store's rate limits, when it has some (./rate-limit.ts). */
  rateLimiter?: RateLimiter | undefined;
  /** Called with each request refused by the rate limits (made safe by the store: it never throws). */
  onLimited?: ((scope: string, verdict: RateVerdict) => void) | undefined;
  /** Failed authentications counted per client address (./auth/throttle.ts); none when turned off. */
  failures?: FailureThrottle | undefined;
  /** True when X-Forwarded-For's last hop is the client address (a trusted proxy). */
  trustProxy?: boolean | undefined;
  /** The store's tracer (./tracing.ts): spans when @opentelemetry/api is installed. */
  tracing?: Tracing | undefined;
  /** The storage's count of writes, when it is in-process and keeps one (./storage/write-count.ts). */
  writeCount?: (() => number) | undefined;
  /** The `Cache-Control` of each kind of answer (./cache-control.ts). */
  cachePolicy: CachePolicy;
}

/** A page's answer as it may be kept: its body, its headers, and those of them a `304` keeps. */
export interface PageAnswer {
  json: JsonText;
  /** `ETag`, `Cache-Control`, `Vary` and, when a next page follows, `Link`. */
  headers: Record<string, string>;
  /** `ETag`, `Cache-Control` and `Vary`: what a `304` says instead (RFC 9110 §15.4.5). */
  unchanged: Record<string, string> & { etag: string };
}

/** What every step reads: the options and what is derived from them once. */
export interface Handler extends HandlerOptions {
  ops: CoreOperations;
  json: PetJson;
  collectionPath: string;
  itemPrefix: string;
  /** The item route's template, "{base}/pets/{petId}". */
  itemRoute: string;
  /** The headers of every answer of the getPet route (its deprecation). */
  deprecation: Record<string, string>;
  publicRoutes: Readonly<Record<string, () => JsonText>>;
  /** The last page answered, by its query string, and the storage's write count then. */
  lastPage: { query: string; writes: number; answer: PageAnswer | undefined };
  /** The last page answered from what a storage gave, and its answer (./answers.ts, `showPage`). */
  shownPage: ShownPage | undefined;
}

/** A page as it was answered: its pets' kept texts in order, what its headers say, and its answer. */
export interface ShownPage {
  entries: readonly PetText[];
  limit: number;
  status: PetStatus | undefined;
  nextCursor: string | undefined;
  answer: PageAnswer;
}

/** One request on its way through the steps: what they read of it, computed once, and its answers. */
export class Exchange extends Responder {
  headers: Readonly<Record<string, HeaderValue>>;
  method: string;
  /** The accepted bearer token, once authenticated: only ever turned into a scope. */
  token: string | undefined;
  /** Who called, once authenticated. */
  principal: Principal | undefined;
  /** Seconds its address must wait, when it passed its limit of failed authentications. */
  throttledFor: number | undefined;
  /** The template of the route the path matched (for observers), once step 1 found one. */
  route: string | undefined;
  /** The CORS headers of every answer, when the request comes from an allowed origin. */
  cors: Record<string, string> | undefined;
  /** The trace id of the request's span, when one records. */
  traceId: string | undefined;

  constructor(readonly request: PetStoreRequest) {
    super({ head: false, requestId: "" }); // both known once step 1 has read the request
    this.headers = {};
    this.method = "";
    this.token = undefined;
    this.principal = undefined;
    this.throttledFor = undefined;
    this.route = undefined;
    this.cors = undefined;
    this.traceId = undefined;
  }
}
