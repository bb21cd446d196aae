/**
 * `petstore-lib/node-http`: a `(req, res, next?)` listener for Node's `http` (and Express) that
 * copies the request into `store.respond()` and writes its response back, plus the Node stream
 * helpers any adapter on Node needs. Translation only. Writing another adapter? Import only from
 * `petstore-lib` and this entry point, as this file does (docs/adapters.md).
 *
 * @example http.createServer(createNodeHandler(createPetStore({ auth: ["my-key"] }))).listen(8080);
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AdapterStore, BodyReader, PetStoreResponse } from "../lib/index.ts";
import { checkOptionNames, isPromise, isUnderBasePath } from "../lib/index.ts";
import { createMountWarning } from "./mount-hint.ts";
import { announcesBody, buffered, cannotRespond, mustClose, nodeRequest, readBody } from "./node-body.ts";

export { answerClientError } from "./client-error.ts";
export { announcesBody, cannotRespond, mustClose, nodeRequest, readBody } from "./node-body.ts";

/** Called for requests outside the store's base path (Connect/Express `next` style). */
export type Fallback = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Called once for every request the store answers, just before the response is written (for logs
 * and metrics): its status, its request id (the `X-Request-Id` it carries), whether the client
 * went away first (nothing is written then), and the milliseconds since the request reached the
 * handler. May set `res.shouldKeepAlive = false` (a server that is stopping does).
 */
export type OnResponse = (
  req: IncomingMessage,
  res: ServerResponse,
  response: { status: number; requestId: string; aborted: boolean; ms: number },
) => void;

export interface NodeHandlerOptions {
  /**
   * Serves requests outside the base path (your other routes). When absent, and no `next` is
   * passed by the host framework, they get the contract's `404 not_found`.
   */
  fallback?: Fallback;
  /** See OnResponse. It must not throw. */
  onResponse?: OnResponse;
}

/** A Node listener; `next`, when a framework passes one, takes requests outside the base path. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

/** Writes the core's response; `Connection: close` when an unread body could be too big to drain. */
function send(
  store: AdapterStore,
  req: IncomingMessage,
  res: ServerResponse,
  response: PetStoreResponse,
  onResponse: OnResponse | undefined,
  started: number,
) {
  const gone = cannotRespond(req, res);
  if (onResponse) {
    const requestId = response.headers["x-request-id"] ?? "";
    onResponse(req, res, { status: response.status, requestId, aborted: gone, ms: performance.now() - started });
  }
  if (gone) return;
  const headers = response.headers;
  if (mustClose(req, req.headers, store.maxBodyBytes)) headers.connection = "close";
  try {
    res.removeHeader("x-powered-by"); // Express sets it on every response; the API's answers carry no banner
    res.writeHead(response.status, headers);
    res.end(response.body);
  } catch {
    res.destroy(); // only a broken socket gets here: there is nobody to answer
  }
}

/** What onError receives when the body was read before the store saw the request. */
const BODY_ALREADY_READ =
  "petstore-lib: the request body was already read by another middleware (express.json(), body-parser, ...) " +
  "before the pet store saw it: mount the pet store (app.use(createNodeHandler(store))) before body parsers";

/** True when another middleware read the body first (body-parser marks the request `_body`; any reader leaves the stream ended). */
function alreadyRead(req: IncomingMessage): boolean {
  return (req as { _body?: unknown })._body === true || req.readableEnded === true;
}

/**
 * The request's BodyReader. A body another middleware already read is not the client's fault: the
 * reader rejects with an Error, which the core answers 500 internal_error and reports to onError.
 */
function bodyReader(req: IncomingMessage): (limit: number) => Promise<Uint8Array> {
  return (limit) => (alreadyRead(req) ? Promise.reject(new Error(BODY_ALREADY_READ)) : readBody(req, limit));
}

/** Hands the request to the store, and writes its response: in this tick when nothing had to wait. */
function answer(
  store: AdapterStore,
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
  body: Uint8Array | BodyReader | undefined,
  onResponse: OnResponse | undefined,
  started: number,
): void {
  const request = nodeRequest(req.method ?? "GET", url, req.headers, undefined, req.rawHeaders);
  request.body = body;
  const response = store.respond(request);
  if (isPromise(response)) response.then((r) => send(store, req, res, r, onResponse, started));
  else send(store, req, res, response, onResponse, started);
}

/**
 * The request's body for the core: its bytes when they are all in already (the usual small body,
 * which came with the headers), else a reader. Bytes in hand let the core answer without a promise.
 */
function bodyOf(req: IncomingMessage, limit: number): Uint8Array | BodyReader {
  if (alreadyRead(req)) return bodyReader(req); // it rejects, as the core then reports
  return buffered(req, limit) ?? bodyReader(req);
}

/**
 * Creates the listener for `http.createServer(listener)`, or to call from an existing server for
 * the paths under `store.basePath` (Express `app.use(listener)` works too).
 */
export function createNodeHandler(store: AdapterStore, options: NodeHandlerOptions = {}): NodeHandler {
  if (!store || typeof store.respond !== "function") {
    throw new TypeError("createNodeHandler: expected a store from createPetStore()");
  }
  checkOptionNames("createNodeHandler", options, ["fallback", "onResponse"]);
  const { basePath } = store;
  const { fallback, onResponse } = options;
  if (fallback !== undefined && typeof fallback !== "function") {
    throw new TypeError("createNodeHandler: options.fallback must be a function (req, res) => void");
  }
  if (onResponse !== undefined && typeof onResponse !== "function") {
    throw new TypeError("createNodeHandler: options.onResponse must be a function (req, res, response) => void");
  }

  const warnOfMount = createMountWarning(basePath);
  return function petStoreListener(req, res, next) {
    // Express rewrites req.url below a mount point; the contract's paths are absolute.
    const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/";
    if (!isUnderBasePath(url, basePath)) {
      if (url !== req.url) warnOfMount(url, req.url ?? "/");
      if (next) return next();
      if (fallback) return fallback(req, res);
    }
    const headers = req.headers;
    const started = onResponse ? performance.now() : 0;
    if (!announcesBody(headers)) return answer(store, req, res, url, undefined, onResponse, started);
    // One microtask later Node's parser is through what arrived with the headers: a small body
    // is then in the stream's buffer, and is handed over as bytes.
    queueMicrotask(() => answer(store, req, res, url, bodyOf(req, store.maxBodyBytes), onResponse, started));
  };
}
