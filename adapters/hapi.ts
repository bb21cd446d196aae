/**
 * The hapi plugin: real hapi routes under the store's base path that answer through the core
 * (`handle()`, or at once when nothing has to wait), so every status, header and body is the
 * Node adapter's. Translation only.
 *
 * hapi's payload parsing is off on these routes (the core reads the raw stream, after routing and
 * authentication), cookies are not parsed, and `auth: false` keeps the host's default strategy
 * off them: the API's bearer keys are checked by the core.
 *
 * @example
 *   await server.register({ plugin: petStorePlugin, options: { store: createPetStore({ auth: ["k"] }) } });
 */
import type { Readable } from "node:stream";
import type { Lifecycle, Plugin, Request, ResponseObject, ResponseToolkit, RouteOptions, Server } from "@hapi/hapi";
import type { PetStore, PetStoreResponse } from "../lib/index.ts";
import { isPromise } from "../lib/index.ts";
import { announcesBody, nodeRequest, readBody } from "./body.ts";

type Store = Pick<PetStore, "respond" | "basePath" | "maxBodyBytes">;

export interface PetStorePluginOptions {
  /** The store to serve, from `createPetStore()`. Its `basePath` decides where the routes live. */
  store: Store;
}

/** Throws a clear error for anything but `{ store }` with a store from createPetStore(). */
function checkOptions(options: unknown): PetStorePluginOptions {
  const o = options as Partial<PetStorePluginOptions> | null;
  if (o === null || typeof o !== "object") throw new TypeError("petstore hapi plugin: options { store } are required");
  for (const key of Object.keys(o)) {
    if (key !== "store")
      throw new TypeError(`petstore hapi plugin: unknown option "${key}" (only "store" is accepted)`);
  }
  const store = o.store;
  if (!store || typeof store.respond !== "function" || typeof store.basePath !== "string") {
    throw new TypeError("petstore hapi plugin: options.store must be a store from createPetStore()");
  }
  return { store };
}

/** Copies the core's response into a hapi response. */
function toHapi(res: PetStoreResponse, h: ResponseToolkit): ResponseObject {
  const response = h.response(res.body).code(res.status);
  for (const name in res.headers) response.header(name, res.headers[name] as string);
  return response;
}

/**
 * Answers one hapi request through the core: a response at once when nothing had to wait (a page
 * from memory), so that hapi goes on without a promise of ours in between; a promise otherwise.
 */
function respond(store: Store, request: Request, h: ResponseToolkit): ResponseObject | Promise<ResponseObject> {
  const raw = request.raw.req;
  const payload = request.payload as Readable | null | undefined;
  const core = nodeRequest(
    raw.method ?? request.method,
    raw.url ?? request.path, // the raw target, exactly as the Node adapter sees it
    raw.headers,
    payload && announcesBody(raw.headers) ? (limit: number) => readBody(payload, limit) : undefined,
  );
  const res = store.respond(core);
  return isPromise(res) ? res.then((r) => toHapi(r, h)) : toHapi(res, h);
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

/** The plugin. Register once per store; several stores need different base paths. */
export const petStorePlugin: Plugin<PetStorePluginOptions> = {
  name: "petstore",
  version: "1.0.0",
  multiple: true,
  register(server: Server, options: PetStorePluginOptions) {
    const { store } = checkOptions(options);
    if (server.realm.modifiers.route.prefix) {
      throw new TypeError(
        "petstore hapi plugin: register it without routes.prefix; give the store its full base path instead " +
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
