/**
 * The standalone server's own routes, outside the base path and without a key (GET and HEAD
 * only): `/healthz` (liveness), `/readyz` (storage answers, not stopping) and the API reference
 * page under `/docs`. Their answers carry the headers every API answer carries, and they read
 * no more of a request body than the store's limit (./body-limit.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { PetStore } from "petstore-lib";
import { PetStoreError } from "petstore-lib";
import type { Awaitable } from "petstore-lib/adapter";
import { isUnderBasePath, requestIdOf } from "petstore-lib/adapter";
import { JSON_TYPE, Responder, responseHeaders, utf8Length } from "petstore-lib/internal";
import type { OnResponse } from "petstore-lib/node-http";
import { cannotRespond, mustClose } from "petstore-lib/node-http";
import { bodyTooLarge, tooLargeAnswer } from "./body-limit.ts";
import { docsRoute } from "./docs.ts";

/** What one of the server's own routes serves (the docs' assets are bytes). */
interface RouteContent {
  status: number;
  contentType: string;
  body: string | Uint8Array;
  headers?: Record<string, string>;
}

/** What a route knows of the server. */
export interface RouteContext {
  store: PetStore;
  /** True once the server is stopping: not ready any more. */
  draining: boolean;
}

export type ServerRoute = (context: RouteContext) => Awaitable<RouteContent>;

const json = (status: number, value: unknown): RouteContent => ({
  status,
  contentType: JSON_TYPE,
  body: JSON.stringify(value),
});

/** Where the server's own routes lie: at or below each of these paths (serverRoute's cases). */
const ROUTE_ROOTS = ["/healthz", "/readyz", "/docs"];

/**
 * False when none of the server's own routes can lie at or below `basePath`: a path under it is
 * the API's without asking serverRoute. Keep ROUTE_ROOTS in step with serverRoute.
 */
export function routesMayLieUnder(basePath: string): boolean {
  return ROUTE_ROOTS.some((root) => isUnderBasePath(root, basePath) || isUnderBasePath(basePath, root));
}

/** The server's own route for `path`, or undefined (the path is the API's). Add new ones here, and their root to ROUTE_ROOTS. */
export function serverRoute(path: string): ServerRoute | undefined {
  switch (path) {
    case "/healthz":
      return () => json(200, { status: "ok" });
    case "/readyz":
      return async ({ store, draining }) => {
        if (draining) return json(503, { status: "unavailable", reason: "the server is stopping" });
        const { ready, reason } = await store.readiness();
        return ready ? json(200, { status: "ready" }) : json(503, { status: "unavailable", reason });
      };
    default:
      return docsRoute(path); // GET /docs: the API reference page, and its assets under /docs/
  }
}

/** The answer of one of the server's own routes. */
async function routeResponse(
  route: ServerRoute,
  context: RouteContext,
  method: string,
  requestId: string,
): Promise<{ status: number; headers: Record<string, string>; body: string | Uint8Array }> {
  const head = method === "HEAD";
  const responder = new Responder({ head, requestId });
  if (method !== "GET" && !head)
    return responder.error(new PetStoreError("method_not_allowed"), { allow: "GET, HEAD" });
  let content: RouteContent;
  try {
    content = await route(context);
  } catch {
    return responder.error(new PetStoreError("internal_error"));
  }
  const bytes = typeof content.body === "string" ? utf8Length(content.body) : content.body.byteLength;
  const headers = responseHeaders(content.contentType, requestId, bytes, content.headers);
  return { status: content.status, headers, body: head ? "" : content.body };
}

/** Answers one request to a server route, telling `onResponse` as the API's answers do. */
export async function serveRoute(
  route: ServerRoute,
  context: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  onResponse: OnResponse,
): Promise<void> {
  const started = performance.now();
  const requestId = requestIdOf(req.headers["x-request-id"]);
  const method = req.method ?? "GET";
  const limit = context.store.maxBodyBytes;
  // A GET's body is read up to the limit and dropped; other methods are refused 405 unread.
  const tooLarge = (method === "GET" || method === "HEAD") && (await bodyTooLarge(req, limit));
  const response = tooLarge
    ? tooLargeAnswer(limit, method === "HEAD", requestId)
    : await routeResponse(route, context, method, requestId);
  const gone = cannotRespond(req, res);
  onResponse(req, res, { status: response.status, requestId, aborted: gone, ms: performance.now() - started });
  if (gone) return;
  if (mustClose(req, req.headers, limit)) response.headers.connection = "close"; // else Node drains at most the limit
  res.writeHead(response.status, response.headers);
  res.end(response.body);
}
