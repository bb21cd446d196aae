/**
 * The targets of the conformance suite, each serving a fresh memory store with one key:
 * `handle()` called directly, the Node adapter through node-mocks-http, the hapi plugin through
 * `server.inject`, and over real sockets the standalone server, the Fastify plugin, and the Node
 * adapter in Express 4 and 5 (at the root, and under a mount path); the fetch handler called in
 * process, and served over a socket by Bun, Deno and workerd (runtimes.ts).
 */
import { createHash } from "node:crypto";
import { EventEmitter } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from "node:zlib";
import Hapi from "@hapi/hapi";
import express5 from "express";
import express4 from "express4";
import Fastify from "fastify";
import { createRequest, createResponse } from "node-mocks-http";
import { petStorePlugin as fastifyPlugin, petStoreFrameworkErrors } from "../../adapters/fastify.ts";
import { createFetchHandler } from "../../adapters/fetch.ts";
import { petStorePlugin } from "../../adapters/hapi.ts";
import { createNodeHandler } from "../../adapters/node-http.ts";
import type { TracerProviderLike } from "../../lib/entries/observe.ts";
import type { PetStore, PetStoreRules, RateLimitOptions } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";
import { startServer } from "../../server/index.ts";
import { createLogger } from "../../server/logger.ts";
import { CORS_ORIGIN } from "../support/conformance-origin.ts";
import { runtimeTargets } from "./runtimes.ts";

export const KEY = "conformance-key";
/** A key of every target's store holding `pets:read` only (the scope case). */
export const READ_KEY = "conformance-read-key";
/** Every target's keys: KEY with every scope, READ_KEY with pets:read. */
const AUTH = { keys: [KEY, { name: "reader", key: READ_KEY, scopes: ["pets:read"] }] };
/** Every target's store allows one origin for CORS (the runtimes' children too). */
const CORS = { origins: [CORS_ORIGIN] };

/** A request as a case writes it; header names in any case. */
export interface Req {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** An answer: lower-case header names, body as text. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Session {
  /** The store behind the target (absent when it runs in another process: Bun, Deno, workerd). */
  store?: PetStore;
  send(req: Req): Promise<Answer>;
  close(): Promise<void>;
  /** The server's origin ("http://127.0.0.1:PORT") when the target listens on a socket. */
  url?: string;
}

/** What a case may ask of the store behind a target (business rules). */
export interface StoreSetup {
  rules?: PetStoreRules;
  rateLimit?: RateLimitOptions;
  /** Where the store's spans go (test/tracing). */
  tracerProvider?: TracerProviderLike;
}

export interface Target {
  name: string;
  /** The store's base path as served (default "/v1"; a mount path included, "/shop/v1"). */
  basePath?: string;
  /** True when every session listens on a socket (has a `url`): the published suite also runs over it. */
  overSocket?: boolean;
  /** Cases this target's host cannot pass, and why (a limit of the host, not of the adapter). */
  hostCannot?: { cases: RegExp; why: string };
  open(setup?: StoreSetup): Promise<Session>;
}

export const baseOf = (target: Target): string => target.basePath ?? "/v1";

/** The headers as sent on the wire: lower-case names, and Content-Length unless the body is chunked. */
export function wireHeaders(req: Req): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers ?? {})) headers[name.toLowerCase()] = value;
  if (req.body !== undefined && headers["transfer-encoding"] === undefined && headers["content-length"] === undefined) {
    headers["content-length"] = String(Buffer.byteLength(req.body));
  }
  return headers;
}

/** A body as text, decoded when the target compressed it (`Content-Encoding`). */
export function bodyText(headers: Record<string, string>, bytes: Buffer): string {
  const coding = headers["content-encoding"];
  if (coding === undefined || bytes.length === 0) return bytes.toString("utf8");
  if (coding === "gzip") return gunzipSync(bytes).toString("utf8");
  if (coding === "br") return brotliDecompressSync(bytes).toString("utf8");
  if (coding === "zstd") return zstdDecompressSync(bytes).toString("utf8");
  throw new Error(`an answer coded with ${coding}`);
}

function textHeaders(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return out;
}

const direct: Target = {
  name: "handle()",
  async open(setup = {}) {
    const store = createPetStore({ auth: AUTH, cors: CORS, ...setup });
    return {
      store,
      send: (req) =>
        store.handle({
          method: req.method,
          path: req.path,
          headers: wireHeaders(req),
          body: req.body === undefined ? undefined : Buffer.from(req.body),
        }),
      close: () => store.close(),
    };
  },
};

const nodeMocks: Target = {
  name: "node-http (node-mocks-http)",
  async open(setup = {}) {
    const store = createPetStore({ auth: AUTH, cors: CORS, ...setup });
    const listener = createNodeHandler(store);
    return {
      store,
      send(req) {
        const mockReq = createRequest<IncomingMessage>({
          method: req.method as "GET",
          url: req.path,
          headers: wireHeaders(req),
        });
        // The mock is an EventEmitter, not a stream: give it the body once someone listens for it.
        Object.assign(mockReq, { resume() {}, pause() {} });
        let sent = false;
        mockReq.on("newListener", (event) => {
          if (event !== "end" || sent || req.body === undefined) return;
          sent = true;
          const body = Buffer.from(req.body);
          setImmediate(() => {
            for (let i = 0; i < body.length; i += 16_384) mockReq.emit("data", body.subarray(i, i + 16_384));
            mockReq.emit("end");
          });
        });
        const mockRes = createResponse<ServerResponse>({ eventEmitter: EventEmitter });
        return new Promise((resolve) => {
          mockRes.on("end", () => {
            const headers = textHeaders(mockRes._getHeaders());
            const bytes = mockRes._getBuffer(); // what was written as bytes: a compressed body
            const body = bytes.length > 0 ? bodyText(headers, bytes) : String(mockRes._getData());
            resolve({ status: mockRes._getStatusCode(), headers, body });
          });
          listener(mockReq, mockRes);
        });
      },
      close: () => store.close(),
    };
  },
};

const hapi: Target = {
  name: "hapi (server.inject)",
  async open(setup = {}) {
    const store = createPetStore({ auth: AUTH, cors: CORS, ...setup });
    const server = Hapi.server();
    await server.register({ plugin: petStorePlugin, options: { store } });
    // shot always adds Content-Length; on the wire a chunked request has none (Node refuses both).
    server.ext("onRequest", (request, h) => {
      if (request.headers["transfer-encoding"] !== undefined) delete request.raw.req.headers["content-length"];
      return h.continue;
    });
    return {
      store,
      async send(req) {
        const res = await server.inject({
          method: req.method,
          url: req.path,
          headers: wireHeaders(req),
          ...(req.body === undefined ? {} : { payload: req.body }),
        });
        const headers = textHeaders(res.headers);
        return { status: res.statusCode, headers, body: bodyText(headers, res.rawPayload) };
      },
      async close() {
        await server.stop();
        await store.close();
      },
    };
  },
};

/**
 * Sends requests to a server on 127.0.0.1:port, one keep-alive socket at a time (or, with
 * `keepAlive: false`, a connection a request: a cluster's primary hands each to the next worker).
 */
export function overHttp(port: number, { keepAlive = true } = {}) {
  const agent = new http.Agent({ keepAlive, maxSockets: 1 });
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => agent.destroy(),
    send(req: Req): Promise<Answer> {
      return new Promise((resolve, reject) => {
        const headers = wireHeaders(req);
        const request = http.request(
          { host: "127.0.0.1", port, method: req.method, path: req.path, headers, agent, timeout: 10_000 },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () => {
              const headers = textHeaders(res.headers);
              resolve({ status: res.statusCode ?? 0, headers, body: bodyText(headers, Buffer.concat(chunks)) });
            });
          },
        );
        request.on("error", reject);
        request.on("timeout", () => request.destroy(new Error("no answer within 10 s")));
        if (req.body !== undefined) request.write(req.body);
        request.end();
      });
    },
  };
}

/** A keys file holding READ_KEY's digest, as the standalone server reads named, scoped keys. */
function readOnlyKeysFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), "petstore-conformance-")), "keys.json");
  const sha256 = createHash("sha256").update(READ_KEY).digest("hex");
  const entry = {
    name: "reader",
    prefix: READ_KEY.slice(0, 13),
    sha256,
    scopes: ["pets:read"],
    createdAt: new Date().toISOString(),
  };
  writeFileSync(file, JSON.stringify({ keys: [entry] }));
  return file;
}

const standalone: Target = {
  name: "standalone server (socket)",
  overSocket: true,
  async open({ rateLimit, ...setup } = {}) {
    const server = await startServer(
      {
        port: 0,
        host: "127.0.0.1",
        storage: "memory",
        basePath: "/v1",
        logLevel: "silent",
        apiKeys: [KEY],
        apiKeysFile: readOnlyKeysFile(),
        corsOrigins: [CORS_ORIGIN],
        ...(rateLimit === undefined ? {} : { rateLimit }),
      },
      { logger: createLogger("silent"), ...setup },
    );
    const client = overHttp(server.port);
    return {
      store: server.store,
      url: client.url,
      send: client.send,
      async close() {
        client.close();
        await server.close();
      },
    };
  },
};

/** Listens on 127.0.0.1 with a free port; closes with its connections. */
async function listen(listener: http.RequestListener) {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const fastify: Target = {
  name: "fastify plugin (socket)",
  overSocket: true,
  async open(setup = {}) {
    const store = createPetStore({ auth: AUTH, cors: CORS, ...setup });
    const app = Fastify({ frameworkErrors: petStoreFrameworkErrors(store) });
    app.get("/host", async () => ({ host: true })); // the host's own route beside the plugin
    await app.register(fastifyPlugin, { store });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const client = overHttp((app.server.address() as { port: number }).port);
    return {
      store,
      url: client.url,
      send: client.send,
      async close() {
        client.close();
        await app.close();
        await store.close();
      },
    };
  },
};

/** Express 4 or 5 with `app.use(createNodeHandler(store))` at the root or under `mount`, before express.json(). */
function expressTarget(name: string, express: typeof express5, mount?: string): Target {
  const basePath = `${mount ?? ""}/v1`;
  return {
    name: `${name}${mount ? ` mounted at ${mount}` : ""} (socket)`,
    basePath,
    overSocket: true,
    async open(setup = {}) {
      const store = createPetStore({ auth: AUTH, basePath, cors: CORS, ...setup });
      const app = express();
      if (mount) app.use(mount, createNodeHandler(store));
      else app.use(createNodeHandler(store));
      app.use(express.json()); // the host's parser, after the store as the README says
      app.get("/host", (_req, res) => {
        res.json({ host: true });
      });
      const server = await listen(app);
      const client = overHttp(server.port);
      return {
        store,
        url: client.url,
        send: client.send,
        async close() {
          client.close();
          await server.close();
          await store.close();
        },
      };
    },
  };
}

/** A Request as a Fetch runtime hands it over: the body streamed in 16 KiB chunks. */
export function toRequest(req: Req, origin = "http://127.0.0.1"): Request {
  let body: ReadableStream<Uint8Array> | undefined;
  if (req.body !== undefined) {
    const bytes = Buffer.from(req.body);
    let at = 0;
    body = new ReadableStream({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(new Uint8Array(bytes.subarray(at, at + 16_384)));
        at += 16_384;
      },
    });
  }
  return new Request(`${origin}${req.path}`, {
    method: req.method,
    headers: wireHeaders(req),
    body,
    duplex: "half",
  } as RequestInit);
}

const fetchDirect: Target = {
  name: "fetch handler (in process)",
  async open(setup = {}) {
    const store = createPetStore({ auth: AUTH, cors: CORS, ...setup });
    const handler = createFetchHandler(store);
    return {
      store,
      async send(req) {
        const res = await handler(toRequest(req));
        const headers: Record<string, string> = {};
        res.headers.forEach((value, name) => {
          headers[name] = value;
        });
        return { status: res.status, headers, body: await res.text() };
      },
      close: () => store.close(),
    };
  },
};

export { closeTargets } from "./runtimes.ts";

/** Every target the suite runs against (a runtime that is not installed is left out, loudly). */
/** The targets whose store lives in this process: `open(setup)` applies the store options (rules). */
export const IN_PROCESS_TARGETS: readonly Target[] = [
  direct,
  nodeMocks,
  hapi,
  standalone,
  fastify,
  expressTarget("express 4", express4),
  expressTarget("express 4", express4, "/shop"),
  expressTarget("express 5", express5),
  expressTarget("express 5", express5, "/shop"),
  fetchDirect,
];

export const TARGETS: readonly Target[] = [...IN_PROCESS_TARGETS, ...runtimeTargets()];
