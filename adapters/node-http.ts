/**
 * `petstore-lib/node-http`: a `(req, res, next?)` listener for Node's `http` and Express that copies
 * the request into `store.respond()` and writes its response back, and the helpers of every adapter
 * on Node. Translation only, from the package's public entry points alone (docs/adapters.md).
 * @example http.createServer(createNodeHandler(createPetStore({ auth: ["my-key"] }))).listen(8080);
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type AdapterStore, type BodyReader, checkOptionNames, isPromise, isUnderBasePath } from "../lib/adapter.ts";
import type { PetStoreResponse } from "../lib/index.ts";
import { checkCallback } from "./check-callback.ts";
import { askWithPlainTags } from "./coded-tags.ts";
import type { Coding } from "./compression.ts";
import { codingFor, encode, isCodable } from "./compression.ts";
import { createMountWarning } from "./mount-hint.ts";
import { announcesBody, buffered, cannotRespond, mustClose, nodeRequest, readBody } from "./node-body.ts";
import { schemeOf } from "./scheme.ts";

export { answerClientError } from "./client-error.ts";
export { announcesBody, cannotRespond, mustClose, nodeRequest, readBody } from "./node-body.ts";

/** Serves requests outside the base path (your other routes); without it, or a host's `next`, they get 404 not_found. */
export type Fallback = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Called once per request the store answers, just before its response is written (logs, metrics): its status,
 * `X-Request-Id`, whether the client went away first (nothing is written then), the milliseconds since the
 * request reached the handler, its span's trace id when one was recorded, and the id of the principal that
 * called once authenticated (never a key). May set `res.shouldKeepAlive = false` (a server that is stopping does).
 */
export type OnResponse = (
  req: IncomingMessage,
  res: ServerResponse,
  response: {
    status: number;
    requestId: string;
    aborted: boolean;
    ms: number;
    traceId?: string | undefined;
    principal?: string | undefined;
  },
) => void;

export interface NodeHandlerOptions {
  /** See Fallback. */
  fallback?: Fallback;
  /** See OnResponse. It must not throw. */
  onResponse?: OnResponse;
  /**
   * Answers of 1 KiB or more go out compressed in the coding the client accepts best of zstd
   * (where this Node has it), br and gzip, each with its own `ETag` (docs/caching.md). Default
   * true; `false` sends every answer as the store made it.
   */
  compression?: boolean;
}

/** A Node listener; `next`, when a framework passes one, takes requests outside the base path. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

const BODY_ALREADY_READ =
  "petstore-lib: the request body was already read by another middleware (express.json(), body-parser, ...) before the pet store saw it: mount the pet store (app.use(createNodeHandler(store))) before body parsers";

/** True when another middleware read the body first (body-parser marks the request `_body`; any reader ends the stream). */
const alreadyRead = (req: IncomingMessage) => (req as { _body?: unknown })._body === true || req.readableEnded;

/** The body: its bytes if all came with the headers (no promise then), else a reader; 500 if another middleware read it. */
function bodyOf(req: IncomingMessage, limit: number): Uint8Array | BodyReader {
  const bytes = alreadyRead(req) ? undefined : buffered(req, limit);
  if (bytes !== undefined) return bytes;
  return (max) => (alreadyRead(req) ? Promise.reject(new Error(BODY_ALREADY_READ)) : readBody(req, max));
}

/** The listener for `http.createServer(listener)`, or for the paths under `store.basePath` of a host (Express `app.use`). */
export function createNodeHandler(store: AdapterStore, options: NodeHandlerOptions = {}): NodeHandler {
  if (!store || typeof store.respond !== "function") {
    throw new TypeError("createNodeHandler: expected a store from createPetStore()");
  }
  checkOptionNames("createNodeHandler", options, ["fallback", "onResponse", "compression"]);
  const { fallback, onResponse, compression = true } = options;
  checkCallback("createNodeHandler", "fallback", fallback, "(req, res) => void");
  checkCallback("createNodeHandler", "onResponse", onResponse, "(req, res, response) => void");
  if (typeof compression !== "boolean") {
    throw new TypeError(`createNodeHandler: compression must be true or false (got ${JSON.stringify(compression)})`);
  }

  /** Writes the core's response; `Connection: close` when an unread body could be too big to drain. */
  function send(
    req: IncomingMessage,
    res: ServerResponse,
    response: PetStoreResponse,
    started: number,
    body: string | Uint8Array = response.body,
  ): void {
    const gone = cannotRespond(req, res);
    const { status, traceId, principal } = response;
    const requestId = response.headers["x-request-id"] ?? "";
    onResponse?.(req, res, { status, requestId, aborted: gone, ms: performance.now() - started, traceId, principal });
    if (gone) return;
    if (mustClose(req, req.headers, store.maxBodyBytes)) response.headers.connection = "close";
    // The core's 304 carries its 200's length (RFC 9110 §8.6 allows it): some HTTP parsers would wait for that body.
    if (response.status === 304) delete response.headers["content-length"];
    try {
      res.removeHeader("x-powered-by"); // Express sets it on every response; the API's answers carry no banner
      res.writeHead(response.status, response.headers).end(body);
    } catch {
      res.destroy(); // only a broken socket gets here: there is nobody to answer
    }
  }

  /** Sends the core's answer, compressed when it is large enough and the client accepts a coding we write. */
  function reply(req: IncomingMessage, res: ServerResponse, r: PetStoreResponse, started: number, coding?: Coding) {
    if (!compression || !isCodable(r)) return send(req, res, r, started);
    const chosen = coding ?? codingFor(req.headers["accept-encoding"]);
    send(req, res, r, started, encode(r, chosen, req.method === "HEAD", req.headers["if-none-match"]));
  }

  /** Hands the request to the core and sends its answer. */
  function answer(req: IncomingMessage, res: ServerResponse, url: string, body?: Uint8Array | BodyReader): void {
    const started = performance.now();
    const request = nodeRequest(req.method ?? "GET", url, req.headers, body, req.rawHeaders);
    request.scheme = schemeOf(req);
    request.clientAddress = req.socket?.remoteAddress;
    // A tag of a coded answer ("abc-br") is the core's ("abc") for the coding this client gets.
    let coding: Coding | undefined;
    if (compression && req.headers["if-none-match"] !== undefined) {
      coding = codingFor(req.headers["accept-encoding"]);
      askWithPlainTags(request, coding);
    }
    const response = store.respond(request);
    if (isPromise(response)) response.then((r) => reply(req, res, r, started, coding));
    else reply(req, res, response, started, coding);
  }

  const warnOfMount = createMountWarning(store.basePath);
  return function petStoreListener(req, res, next) {
    // Express rewrites req.url below a mount point; the contract's paths are absolute.
    const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/";
    if (!isUnderBasePath(url, store.basePath)) {
      if (url !== req.url) warnOfMount(url, req.url ?? "/");
      if (next) return next();
      if (fallback) return fallback(req, res);
    }
    if (!announcesBody(req.headers)) return answer(req, res, url);
    // A microtask later Node's parser is through what came with the headers: a small body is all in.
    queueMicrotask(() => answer(req, res, url, bodyOf(req, store.maxBodyBytes)));
  };
}
