/**
 * The targets of the conformance suite, each serving a fresh memory store with one key:
 * `handle()` called directly, the Node adapter through node-mocks-http, the hapi plugin through
 * `server.inject`, the standalone server over a real socket, the fetch handler called in process,
 * and the fetch handler served over a socket by Bun, Deno and workerd (runtimes.ts).
 */
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import http from "node:http";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import Hapi from "@hapi/hapi";
import { createRequest, createResponse } from "node-mocks-http";
import { createFetchHandler } from "../../adapters/fetch.ts";
import { petStorePlugin } from "../../adapters/hapi.ts";
import { createLogger } from "../../adapters/logger.ts";
import { createNodeHandler } from "../../adapters/node-http.ts";
import { startServer } from "../../adapters/server.ts";
import { createPetStore } from "../../lib/index.ts";
import { runtimeTargets } from "./runtimes.ts";

export const KEY = "conformance-key";

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

/** A NewPet as `store.createPet` takes it. */
export interface Seed {
  name: string;
  categoryId: number;
  status?: "available" | "pending" | "sold";
}

export interface Session {
  /** Creates a pet in the store behind the target, without HTTP (in process, or by the child's own channel). */
  seed(pet: Seed): Promise<void>;
  send(req: Req): Promise<Answer>;
  close(): Promise<void>;
}

export interface Target {
  name: string;
  open(): Promise<Session>;
}

/** The headers as sent on the wire: lower-case names, and Content-Length unless the body is chunked. */
export function wireHeaders(req: Req): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers ?? {})) headers[name.toLowerCase()] = value;
  if (req.body !== undefined && headers["transfer-encoding"] === undefined && headers["content-length"] === undefined) {
    headers["content-length"] = String(Buffer.byteLength(req.body));
  }
  return headers;
}

export function textHeaders(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return out;
}

const direct: Target = {
  name: "handle()",
  async open() {
    const store = createPetStore({ auth: [KEY] });
    return {
      seed: (pet) => store.createPet(pet).then(() => {}),
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
  async open() {
    const store = createPetStore({ auth: [KEY] });
    const listener = createNodeHandler(store);
    return {
      seed: (pet) => store.createPet(pet).then(() => {}),
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
          mockRes.on("end", () =>
            resolve({
              status: mockRes._getStatusCode(),
              headers: textHeaders(mockRes._getHeaders()),
              body: String(mockRes._getData()),
            }),
          );
          listener(mockReq, mockRes);
        });
      },
      close: () => store.close(),
    };
  },
};

const hapi: Target = {
  name: "hapi (server.inject)",
  async open() {
    const store = createPetStore({ auth: [KEY] });
    const server = Hapi.server();
    await server.register({ plugin: petStorePlugin, options: { store } });
    // shot always adds Content-Length; on the wire a chunked request has none (Node refuses both).
    server.ext("onRequest", (request, h) => {
      if (request.headers["transfer-encoding"] !== undefined) delete request.raw.req.headers["content-length"];
      return h.continue;
    });
    return {
      seed: (pet) => store.createPet(pet).then(() => {}),
      async send(req) {
        const res = await server.inject({
          method: req.method,
          url: req.path,
          headers: wireHeaders(req),
          ...(req.body === undefined ? {} : { payload: req.body }),
        });
        return { status: res.statusCode, headers: textHeaders(res.headers), body: res.payload };
      },
      async close() {
        await server.stop();
        await store.close();
      },
    };
  },
};

/**
 * Sends `req` over a socket (one kept-alive connection per agent), with `extra` request headers;
 * a compressed body is decoded.
 */
export function sendOver(
  port: number,
  agent: http.Agent,
  req: Req,
  extra: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port,
        method: req.method,
        path: req.path,
        headers: { ...extra, ...wireHeaders(req) },
        agent,
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          let body = Buffer.concat(chunks);
          const encoding = res.headers["content-encoding"];
          if (body.length === 0) {
            // HEAD, or an empty answer: nothing to decode
          } else if (encoding === "gzip") body = gunzipSync(body);
          else if (encoding === "br") body = brotliDecompressSync(body);
          else if (encoding === "deflate") body = inflateSync(body);
          resolve({ status: res.statusCode ?? 0, headers: textHeaders(res.headers), body: body.toString("utf8") });
        });
      },
    );
    request.on("error", reject);
    request.on("timeout", () => request.destroy(new Error("no answer within 10 s")));
    if (req.body !== undefined) request.write(req.body);
    request.end();
  });
}

const standalone: Target = {
  name: "standalone server (socket)",
  async open() {
    const server = await startServer(
      { port: 0, host: "127.0.0.1", storage: "memory", basePath: "/v1", logLevel: "silent", apiKeys: [KEY] },
      { logger: createLogger("silent") },
    );
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    return {
      seed: (pet) => server.store.createPet(pet).then(() => {}),
      send: (req) => sendOver(server.port, agent, req),
      async close() {
        agent.destroy();
        await server.close();
      },
    };
  },
};

/** A Request as a Fetch runtime would hand it over: the body streamed in 16 KiB chunks. */
export function toRequest(req: Req, origin = "http://127.0.0.1"): Request {
  const headers = wireHeaders(req);
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
  return new Request(`${origin}${req.path}`, { method: req.method, headers, body, duplex: "half" } as RequestInit);
}

/** A Response as a client reads it: lower-case header names, the body as text. */
export async function fromResponse(res: Response): Promise<Answer> {
  const headers: Record<string, string> = {};
  for (const [name, value] of res.headers) headers[name] = value;
  return { status: res.status, headers, body: await res.text() };
}

const fetchDirect: Target = {
  name: "fetch handler (in process)",
  async open() {
    const store = createPetStore({ auth: [KEY] });
    const handler = createFetchHandler(store);
    return {
      seed: (pet) => store.createPet(pet).then(() => {}),
      send: async (req) => fromResponse(await handler(toRequest(req))),
      close: () => store.close(),
    };
  },
};

/** Every target the suite runs against (a runtime that is not installed is left out, loudly). */
export const TARGETS: readonly Target[] = [direct, nodeMocks, hapi, standalone, fetchDirect, ...runtimeTargets()];

export { closeTargets } from "./runtimes.ts";
