/**
 * The four targets of the conformance suite, each serving a fresh memory store with one key:
 * `handle()` called directly, the Node adapter through node-mocks-http, the hapi plugin through
 * `server.inject`, and the standalone server over a real socket.
 */
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import http from "node:http";
import Hapi from "@hapi/hapi";
import { createRequest, createResponse } from "node-mocks-http";
import { petStorePlugin } from "../../adapters/hapi.ts";
import { createLogger } from "../../adapters/logger.ts";
import { createNodeHandler } from "../../adapters/node-http.ts";
import { startServer } from "../../adapters/server.ts";
import type { PetStore } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";

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

export interface Session {
  /** The store behind the target, to seed pets without HTTP. */
  store: PetStore;
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

function textHeaders(headers: Record<string, unknown>): Record<string, string> {
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
  async open() {
    const store = createPetStore({ auth: [KEY] });
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
      store,
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

/** Sends one request over a real socket to 127.0.0.1:`port` (a server of any process). */
export function sendOverSocket(port: number, agent: http.Agent, req: Req): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = wireHeaders(req);
    const request = http.request(
      { host: "127.0.0.1", port, method: req.method, path: req.path, headers, agent, timeout: 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: textHeaders(res.headers),
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
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
      store: server.store,
      send: (req) => sendOverSocket(server.port, agent, req),
      async close() {
        agent.destroy();
        await server.close();
      },
    };
  },
};

/** Every target the suite runs against. */
export const TARGETS: readonly Target[] = [direct, nodeMocks, hapi, standalone];
