/**
 * `petstore-lib/fetch`: Web standard `Request` in, `Response` out, for `Bun.serve`, `Deno.serve`,
 * Cloudflare Workers, Next.js route handlers and Hono (`c.req.raw`). Translation only. The body is
 * read only when the core asks for it (after routing and auth) and refused past the store's limit.
 *
 * @example Bun.serve({ fetch: createFetchHandler(createPetStore({ auth: ["my-key"] })) });
 */

import type { AdapterStore } from "../lib/adapter.ts";
import { checkOptionNames, isPromise, isUnderBasePath, REQUEST_HEADERS } from "../lib/adapter.ts";
import type { PetStoreRequest, PetStoreResponse } from "../lib/index.ts";
import { PetStoreError } from "../lib/index.ts";
import { checkCallback } from "./check-callback.ts";

/** Serves requests outside the store's base path (your other routes). */
export type FetchFallback = (request: Request) => Response | Promise<Response>;

export interface FetchHandlerOptions {
  /** Answers requests outside the base path. When absent they get the contract's `404 not_found`. */
  fallback?: FetchFallback;
}

/**
 * `(request, context?) => Promise<Response>`, the shape every Fetch runtime serves. `context` is
 * what the runtime passes beside the request, read only for the client's address (failed
 * authentications are throttled per address): Deno's `info` (`remoteAddr`), Bun's `server`
 * (`requestIP`), @hono/node-server's `env` (`incoming`). Without one, requests are not throttled.
 */
export type FetchHandler = (request: Request, context?: unknown) => Promise<Response>;

/** The client's address from what a runtime passes beside the request, when it says. */
function addressOf(request: Request, context: unknown): string | undefined {
  if (context === null || typeof context !== "object") return undefined;
  const given = context as {
    remoteAddr?: { hostname?: unknown };
    requestIP?: unknown;
    incoming?: { socket?: { remoteAddress?: unknown } };
  };
  try {
    const deno = given.remoteAddr?.hostname;
    if (typeof deno === "string") return deno;
    if (typeof given.requestIP === "function") {
      const bun = (given.requestIP as (r: Request) => { address?: unknown } | null).call(context, request)?.address;
      if (typeof bun === "string") return bun;
    }
    const node = given.incoming?.socket?.remoteAddress;
    return typeof node === "string" ? node : undefined;
  } catch {
    return undefined; // a context of another shape: no address, no throttling
  }
}

/**
 * The request's headers as the core takes them: the ones it reads (REQUEST_HEADERS), each by
 * `get()` (a repeated header joined with ", ", as Headers does). Listing every header costs more
 * than the rest of the adapter on Deno, whose Headers sort and join the whole list each time.
 */
function headerRecord(source: Headers): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < REQUEST_HEADERS.length; i++) {
    const name = REQUEST_HEADERS[i] as string;
    const value = source.get(name);
    if (value !== null) headers[name] = value;
  }
  return headers;
}

const ALREADY_READ =
  "petstore-lib/fetch: the request body was already read by something before the pet store (e.g. c.req.json() in a Hono middleware): hand the request to the pet store before anything reads its body";

/** True when a Content-Length announces at most `limit` bytes. */
function small(length: string | undefined, limit: number): boolean {
  return length !== undefined && /^[0-9]+$/.test(length) && Number(length) <= limit;
}

/**
 * workerd answers a request before its body is read and drops `Connection: close`, so a client
 * still sending the body meets a reset instead of the answer: there an unwanted body is read and
 * dropped first, up to DRAIN_BYTES (past that, the connection is closed, as everywhere).
 */
const DROPS_CONNECTION_CLOSE =
  (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === "Cloudflare-Workers";
const DRAIN_BYTES = 1024 * 1024;

/** A request's body stream, read for the core on demand (only requests with a body make one). */
class StreamBody {
  /** The core asked for it. */
  used = false;
  /** Read to its end. */
  complete = false;
  readonly read: (limit: number) => Promise<Uint8Array> = this.bytes.bind(this);

  constructor(
    private readonly request: Request,
    private readonly stream: ReadableStream<Uint8Array>,
  ) {}

  /** Reads and drops the whole body, up to DRAIN_BYTES; true when it was all read. */
  async drop(): Promise<boolean> {
    if (this.taken()) return false;
    this.complete = await dropRest(this.stream.getReader(), DRAIN_BYTES);
    return this.complete;
  }

  /** True when something else read or is reading the body. */
  taken(): boolean {
    return this.request.bodyUsed || this.stream.locked;
  }

  /** The bytes, rejecting with `payload_too_large` (and cancelling the stream) past `limit`. */
  async bytes(limit: number): Promise<Uint8Array> {
    this.used = true;
    if (this.taken()) throw new Error(ALREADY_READ); // a 500, reported to onError
    const reader = this.stream.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > limit) {
          if (DROPS_CONNECTION_CLOSE) this.complete = await dropRest(reader, DRAIN_BYTES - size);
          else reader.cancel().catch(() => {}); // stop the upload: nothing more of it is wanted
          throw new PetStoreError("payload_too_large");
        }
        chunks.push(value);
      }
    } catch (error) {
      if (error instanceof PetStoreError) throw error;
      throw new PetStoreError("invalid_body", "The request body was cut short.");
    }
    this.complete = true;
    if (chunks.length === 1) return chunks[0] as Uint8Array;
    const body = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      body.set(chunk, at);
      at += chunk.byteLength;
    }
    return body;
  }
}

/**
 * The core's answer as a Response (no body for HEAD: the core gives "" and the GET length). A 304
 * goes without the length of its 200 that the core gives it: some HTTP parsers would wait for that body.
 */
function toResponse(answer: PetStoreResponse): Response {
  if (answer.status === 304) delete answer.headers["content-length"];
  return new Response(answer.body === "" ? null : answer.body, { status: answer.status, headers: answer.headers });
}

/**
 * The answer once the connection can carry the next request: a body the core did not read is
 * drained when its Content-Length says it is small; otherwise the answer says `Connection: close`
 * (as the Node adapter does), so a client never reuses a connection that is then cut.
 */
function finish(answer: PetStoreResponse, body: StreamBody | undefined, length: string | undefined, limit: number) {
  if (body === undefined || body.complete) return toResponse(answer);
  const unread = !body.used && !body.taken();
  if (unread && small(length, limit)) {
    return body.bytes(limit).then(
      () => toResponse(answer),
      () => toResponse(answer),
    );
  }
  if (unread && DROPS_CONNECTION_CLOSE && (length === undefined || small(length, DRAIN_BYTES))) {
    return body.drop().then((drained) => {
      if (!drained) answer.headers.connection = "close";
      return toResponse(answer);
    });
  }
  answer.headers.connection = "close";
  return toResponse(answer);
}

/** Reads and drops what is left of a body, at most `max` bytes more; true when it was all read. */
async function dropRest(reader: ReadableStreamDefaultReader<Uint8Array>, max: number): Promise<boolean> {
  let left = max;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return true;
      left -= value.byteLength;
      if (left < 0) break;
    }
  } catch {
    return false;
  }
  reader.cancel().catch(() => {});
  return false;
}

/**
 * Creates `(request: Request) => Promise<Response>` answering the requests under
 * `store.basePath`; the others go to `options.fallback`, or get `404 not_found`.
 */
export function createFetchHandler(store: AdapterStore, options: FetchHandlerOptions = {}): FetchHandler {
  if (!store || typeof store !== "object" || typeof store.respond !== "function") {
    throw new TypeError("createFetchHandler: expected a store from createPetStore()");
  }
  checkOptionNames("createFetchHandler", options, ["fallback"]);
  const { fallback } = options;
  checkCallback("createFetchHandler", "fallback", fallback, "(request) => Response");
  const { basePath, maxBodyBytes } = store;

  return function petStoreFetch(request: Request, context?: unknown): Promise<Response> {
    const url = typeof request?.url === "string" ? request.url : undefined;
    if (url === undefined || !(request.headers instanceof Headers)) {
      return Promise.reject(new TypeError("createFetchHandler: the handler takes a Request"));
    }
    // "scheme://host[:port]/path?query#fragment": the path starts at the first "/" after "//";
    // a fragment (a Request built in process may keep one) is no part of the request.
    let start = url.indexOf("//");
    start = start === -1 ? url.indexOf("/") : url.indexOf("/", start + 2);
    let end = start === -1 ? -1 : url.indexOf("#", start);
    if (end === -1) end = url.length;
    let q = start === -1 ? -1 : url.indexOf("?", start);
    if (q > end) q = -1;
    const path = start === -1 ? "/" : url.slice(start, q === -1 ? end : q);
    if (fallback !== undefined && !isUnderBasePath(path, basePath)) {
      try {
        return Promise.resolve(fallback(request));
      } catch (error) {
        return Promise.reject(error); // the host's own error, as the host's own handler would give it
      }
    }
    const headers = headerRecord(request.headers);
    const method = request.method;
    // A GET or HEAD Request has no body (the Fetch standard): not even its getter is worth a call.
    const stream = method === "GET" || method === "HEAD" ? null : request.body;
    const body = stream === null ? undefined : new StreamBody(request, stream);
    const core: PetStoreRequest = {
      method,
      path,
      query: q === -1 ? undefined : url.slice(q + 1, end),
      headers,
      body: body?.read,
      scheme: url.startsWith("https:") ? "https" : "http",
      clientAddress: context === undefined ? undefined : addressOf(request, context),
    };
    // respond(): the response itself when nothing had to wait (a page from memory), built into a
    // Response at once; a promise only when the storage or the body is awaited.
    const response = store.respond(core);
    if (body === undefined)
      return isPromise(response) ? response.then(toResponse) : Promise.resolve(toResponse(response));
    const length = headers["content-length"];
    return Promise.resolve(response).then((r) => finish(r, body, length, maxBodyBytes));
  };
}
