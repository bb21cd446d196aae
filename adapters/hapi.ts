/**
 * `petstore-lib/hapi`: real hapi routes under the store's base path that answer through the core,
 * so every status, header and body is the Node adapter's. Translation only. hapi's payload parsing
 * is off on them (the core reads the raw stream after routing and auth), cookies are not parsed,
 * and `auth: false` keeps the host's default strategy off them: the core checks the API's keys.
 *
 * @example await server.register({ plugin: petStorePlugin, options: { store: createPetStore({ auth: ["k"] }) } });
 */
import type { Readable } from "node:stream";
import type { Lifecycle, Plugin, Request, ResponseObject, ResponseToolkit, RouteOptions, Server } from "@hapi/hapi";
import type { AdapterStore } from "../lib/adapter.ts";
import { checkOptionNames, isPromise } from "../lib/adapter.ts";
import type { PetStoreResponse } from "../lib/index.ts";
import { askWithPlainTags, tagHeld } from "./coded-tags.ts";
import { announcesBody, nodeRequest, readBody } from "./node-body.ts";
import { schemeOf } from "./scheme.ts";

export interface PetStorePluginOptions {
  /** The store to serve, from `createPetStore()`. Its `basePath` decides where the routes live. */
  store: AdapterStore;
}

/** Throws a clear error for anything but `{ store }` with a store from createPetStore(). */
function checkOptions(options: unknown): PetStorePluginOptions {
  checkOptionNames("petstore-lib/hapi", options, ["store"]);
  const store = (options as Partial<PetStorePluginOptions>).store;
  if (!store || typeof store.respond !== "function" || typeof store.basePath !== "string") {
    throw new TypeError("petstore-lib/hapi: options.store must be a store from createPetStore()");
  }
  return { store };
}

/** The coding hapi will answer this request with (its own compression), or undefined: none, or compression off. */
function hapiCoding(request: Request): string | undefined {
  const coding = request.server.settings.compression === false ? "identity" : request.info.acceptEncoding;
  return coding === "identity" || !coding ? undefined : coding;
}

/** True when hapi compresses an answer of `bytes` (its `compression.minBytes`, 1024 by default, or more). */
function hapiCodes(request: Request, bytes: number): boolean {
  const compression = request.server.settings.compression;
  if (compression === false) return false;
  return bytes >= ((typeof compression === "object" ? compression.minBytes : undefined) ?? 1024);
}

/**
 * Copies the core's response into a hapi response, with validators that stay right when hapi
 * compresses: a page or pet's tag is given through `etag()` so that hapi names a coded answer
 * `"tag-gzip"`; a `304` names the representation the client holds (docs/caching.md).
 */
function toHapi(res: PetStoreResponse, request: Request, h: ResponseToolkit): ResponseObject {
  // A 204 (a CORS preflight's answer) and a 304 have no payload at all: hapi would type an empty string as HTML.
  const empty = res.status === 204 || res.status === 304;
  const response = h.response(empty ? undefined : res.body).code(res.status);
  const { etag, vary, ...headers } = res.headers;
  for (const name in headers) response.header(name, headers[name] as string);
  // Name by name, and Accept-Encoding as hapi's compression writes it, which then finds it there.
  for (const name of vary?.split(", ") ?? []) response.vary(name === "Accept-Encoding" ? "accept-encoding" : name);
  if (etag === undefined) return response;
  if (res.status !== 304) return response.etag(etag.slice(1, -1), { weak: false, vary: true });
  // hapi does not code a 304: it names the coded answer when that is what the client holds.
  const coding = hapiCodes(request, Number(res.headers["content-length"])) ? hapiCoding(request) : undefined;
  const ifNoneMatch = request.raw.req.headers["if-none-match"];
  return response.header("etag", coding === undefined ? etag : tagHeld(etag, coding, ifNoneMatch));
}

/**
 * Answers one hapi request through the core: a response at once when nothing had to wait (a page
 * from memory), so that hapi goes on without a promise of ours in between; a promise otherwise.
 */
function respond(store: AdapterStore, request: Request, h: ResponseToolkit): ResponseObject | Promise<ResponseObject> {
  const raw = request.raw.req;
  const payload = request.payload as Readable | null | undefined;
  const core = nodeRequest(
    raw.method ?? request.method,
    raw.url ?? request.path, // the raw target, exactly as the Node adapter sees it
    raw.headers,
    payload && announcesBody(raw.headers) ? (limit: number) => readBody(payload, limit) : undefined,
    raw.rawHeaders,
  );
  core.scheme = schemeOf(raw);
  core.clientAddress = raw.socket?.remoteAddress;
  // A tag of an answer hapi coded ("abc-gzip") is the core's ("abc") for the coding this client gets.
  if (raw.headers["if-none-match"] !== undefined) askWithPlainTags(core, hapiCoding(request));
  const res = store.respond(core);
  return isPromise(res) ? res.then((r) => toHapi(r, request, h)) : toHapi(res, request, h);
}

/** True when hapi could not decode the path's parameters (it would answer its own 400). */
function undecodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return false;
  } catch {
    return true;
  }
}

/**
 * Refuses a hapi older than 21 in one line: the plugin needs hapi 21's request and response
 * (docs/adapters.md says why 20 cannot work). `server.version` is the host's own.
 */
function checkVersion(server: Server): void {
  const version = String((server as { version?: unknown }).version ?? "");
  const major = Number(/^(\d+)\./.exec(version)?.[1]);
  if (!(major >= 21)) {
    throw new Error(
      `petstore-lib/hapi needs @hapi/hapi 21 or later; this project has @hapi/hapi ${version || "(unknown)"}`,
    );
  }
}

/** The plugin. Register once per store; several stores need different base paths. */
export const petStorePlugin: Plugin<PetStorePluginOptions> = {
  name: "petstore",
  version: "1.0.0",
  multiple: true,
  register(server: Server, options: PetStorePluginOptions) {
    checkVersion(server);
    const { store } = checkOptions(options);
    if (server.realm.modifiers.route.prefix) {
      throw new TypeError(
        "petstore-lib/hapi: register it without routes.prefix; give the store its full base path instead " +
          '(createPetStore({ basePath: "/api/v1" })) so that Location and Link headers stay right',
      );
    }
    const base = store.basePath;
    const handler: Lifecycle.Method = (request, h) => respond(store, request, h);
    const common: RouteOptions = {
      auth: false,
      state: { parse: false, failAction: "ignore" },
      response: { ranges: false, emptyStatusCode: 200 },
    };
    // The raw stream goes to the core; hapi neither parses it nor judges its type or size.
    const withBody: RouteOptions = {
      ...common,
      payload: {
        parse: false,
        output: "stream",
        override: "application/octet-stream",
        maxBytes: Number.MAX_SAFE_INTEGER,
        failAction: async (request, h) => (await respond(store, request, h)).takeover(),
      },
    };
    // A path hapi cannot decode goes to the catch-all, whose handler gives the core the raw target.
    const under = `${base}/`;
    server.ext("onRequest", (request, h) => {
      const path = request.path;
      if (path.startsWith(under) && path.includes("%") && undecodable(path)) request.setUrl(`${under}-`);
      return h.continue;
    });
    server.route([
      { method: "GET", path: `${base}/pets`, handler, options: common },
      { method: "POST", path: `${base}/pets`, handler, options: withBody },
      { method: "GET", path: `${base}/pets/{petId}`, handler, options: common },
      // Everything else under the base path: the core answers 404 not_found or 405 with Allow.
      { method: "*", path: `${base}/{path*}`, handler, options: withBody },
    ]);
  },
};

export default petStorePlugin;
