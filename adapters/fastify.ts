/**
 * `petstore-lib/fastify`: real Fastify 5 routes under the store's base path that answer through
 * the core, so every status, header and body is the Node adapter's. Translation only. Body parsing
 * is off on them (the plugin's encapsulated context hands the unread stream to the core); the
 * host's other routes, parsers, hooks, error and 404 handlers are untouched.
 *
 * @example await Fastify().register(petStorePlugin, { store: createPetStore({ auth: ["my-key"] }) });
 */
import type { Readable } from "node:stream";
import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  RouteHandlerMethod,
} from "fastify";
import type { AdapterStore } from "../lib/adapter.ts";
import { checkOptionNames, isPromise, isUnderBasePath } from "../lib/adapter.ts";
import type { PetStoreResponse } from "../lib/index.ts";
import { announcesBody, mustClose, nodeRequest, readBody } from "./node-body.ts";
import { schemeOf } from "./scheme.ts";

export interface PetStoreFastifyOptions {
  /**
   * The store to serve, from `createPetStore()`. Its `basePath` is where the routes live, in full:
   * registered with a `prefix`, the base path must start with it (`prefix: "/shop"` and
   * `basePath: "/shop/v1"`), so that Location and Link headers stay right.
   */
  store: AdapterStore;
}

/** Our option, and those Fastify itself reads from `register(plugin, options)`. */
const OPTIONS = ["store", "prefix", "logLevel", "logSerializers"];

/** Throws a clear error for anything but `{ store }` with a store from createPetStore(). */
function checkOptions(options: unknown): AdapterStore {
  checkOptionNames("petstore-lib/fastify", options, OPTIONS);
  const store = (options as Partial<PetStoreFastifyOptions>).store;
  if (!store || typeof store.respond !== "function" || typeof store.basePath !== "string") {
    throw new TypeError("petstore-lib/fastify: options.store must be a store from createPetStore()");
  }
  return store;
}

/** The stream our parser handed on, or the raw request when nothing was parsed (GET, no body). */
function streamOf(request: FastifyRequest): Readable {
  const body = request.body as Readable | undefined;
  return body !== null && typeof body === "object" && typeof body.on === "function" ? body : request.raw;
}

/** Writes the core's response; `Connection: close` when an unread body could be too big to drain. */
function send(store: AdapterStore, request: FastifyRequest, reply: FastifyReply, response: PetStoreResponse): void {
  const raw = request.raw;
  // A 304 has no payload at all (Fastify would give an empty string a type and a length of 0), and
  // goes without its 200's length that the core gives it: some HTTP parsers would wait for that body.
  const notModified = response.status === 304;
  if (notModified) delete response.headers["content-length"];
  reply.code(response.status).headers(response.headers);
  if (mustClose(raw, raw.headers, store.maxBodyBytes)) reply.header("connection", "close");
  reply.send(notModified ? undefined : response.body);
}

/** Responds to one request through the core: in this tick when nothing had to wait, else when the core has responded. */
function respond(store: AdapterStore, request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw;
  const core = nodeRequest(
    raw.method ?? request.method,
    raw.url ?? request.url, // the raw target, exactly as the Node adapter sees it
    raw.headers,
    announcesBody(raw.headers) ? (limit: number) => readBody(streamOf(request), limit) : undefined,
    raw.rawHeaders,
  );
  core.scheme = schemeOf(raw);
  core.clientAddress = raw.socket?.remoteAddress;
  const response = store.respond(core);
  if (isPromise(response)) response.then((r) => send(store, request, reply, r));
  else send(store, request, reply, response);
}

/**
 * Refuses a Fastify older than 5 in one line: the plugin needs Fastify 5's request and reply
 * (docs/adapters.md says why 4 cannot work). `fastify.version` is the host's own.
 */
function checkVersion(fastify: FastifyInstance): void {
  const version = String((fastify as { version?: unknown }).version ?? "");
  const major = Number(/^(\d+)\./.exec(version)?.[1]);
  if (!(major >= 5)) {
    throw new Error(
      `petstore-lib/fastify needs fastify 5 or later; this project has fastify ${version || "(unknown)"}`,
    );
  }
}

function register(fastify: FastifyInstance, options: PetStoreFastifyOptions, done: (error?: Error) => void): void {
  let error: Error | undefined;
  try {
    checkVersion(fastify);
    addRoutes(fastify, checkOptions(options));
  } catch (e) {
    error = e as Error; // a plugin's error is the host's register() or ready() rejecting
  }
  done(error);
}

function addRoutes(fastify: FastifyInstance, store: AdapterStore): void {
  const prefix = fastify.prefix;
  if (prefix !== "" && store.basePath !== prefix && !store.basePath.startsWith(`${prefix}/`)) {
    throw new TypeError(
      `petstore-lib/fastify: registered with prefix "${prefix}", the store's basePath must start with it ` +
        `(createPetStore({ basePath: "${prefix}/v1" })) so that Location and Link headers stay right; ` +
        `it is "${store.basePath}"`,
    );
  }
  const base = store.basePath.slice(prefix.length); // Fastify adds the prefix back

  // Body parsing off: this context's only parser hands the unread stream on to the core.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser("*", (_request, payload, next) => next(null, payload));
  // A Content-Type Fastify cannot even parse ("json") is refused before any parser: the core answers it.
  fastify.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.code !== "FST_ERR_CTP_INVALID_MEDIA_TYPE") throw error; // to the host's error handler
    respond(store, request, reply);
  });

  const handler: RouteHandlerMethod = function petStoreRoute(request, reply) {
    respond(store, request, reply);
  };
  const own = { handler, exposeHeadRoute: false }; // HEAD is the core's, listed below
  fastify.route({ ...own, method: ["GET", "HEAD", "POST"], url: `${base}/pets` });
  fastify.route({ ...own, method: ["GET", "HEAD"], url: `${base}/pets/:petId` });
  // Everything else under the base path: the core answers 404 not_found or 405 with Allow.
  if (base !== "") fastify.all(base, handler);
  fastify.all(`${base}/*`, handler);
}

/**
 * The plugin: `fastify.register(petStorePlugin, { store })`. Register it once per store; several
 * stores need different base paths. Fastify 5.
 */
export const petStorePlugin: FastifyPluginCallback<PetStoreFastifyOptions> = Object.assign(register, {
  // What fastify-plugin would set (without the dependency): the plugin's name (`app.hasPlugin("petstore-lib")`),
  // and an encapsulated context (no skip-override) that keeps the raw-body parser and error handler
  // on these routes only. No `fastify` range in the metadata: checkVersion says it in one line.
  [Symbol.for("skip-override")]: false,
  [Symbol.for("fastify.display-name")]: "petstore-lib",
  [Symbol.for("plugin-meta")]: { name: "petstore-lib", encapsulate: true },
});

/** @deprecated since 1.1.0 (removed in 2.0): the same plugin as `petStorePlugin`, the name every adapter's plugin has. */
export const petStore = petStorePlugin;

/**
 * For Fastify's `frameworkErrors` server option: a path under the base path that Fastify's router
 * cannot percent-decode (`/v1/pets/%zz`) is refused by Fastify before any route or hook runs
 * (400 FST_ERR_BAD_URL). With this, the core answers it as the contract says (400
 * invalid_pet_id, or 404 not_found). Other framework errors go to `next`, or to Fastify's error
 * handler.
 *
 * @example
 *   const app = Fastify({ frameworkErrors: petStoreFrameworkErrors(store) });
 */
export function petStoreFrameworkErrors(
  store: AdapterStore,
  next?: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  checkOptions({ store });
  const base = store.basePath;
  return function frameworkErrors(error, request, reply) {
    if (error.code === "FST_ERR_BAD_URL" && isUnderBasePath(request.raw.url ?? "", base)) {
      return respond(store, request, reply);
    }
    if (next) return next(error, request, reply);
    reply.code(error.statusCode ?? 500).send(error);
  };
}

export default petStorePlugin;
