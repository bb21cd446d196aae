/**
 * How the conformance cases talk to a target: one `send(request)` for both kinds of target (a
 * server at `url`, reached over a socket with `node:http`, loaded only then; or a `fetch(request)`
 * function called in process, in Node or in a browser), and the checks every answer owes the
 * contract. No test runner: a failure is an `AssertionError` (./assert.ts). The cases speak raw
 * HTTP, not petstore-lib/client: they check each answer's bytes, and a retry would hide a failure.
 */
import type { Agent } from "node:http";
import { assert } from "./assert.ts";

type Http = typeof import("node:http");
type Zlib = typeof import("node:zlib");

/** What every target has: where the API lives, a key it accepts, and a way to empty it. */
export interface TargetBase {
  /** The store's base path as served, e.g. "/v1" (a mount path included: "/shop/v1"). */
  readonly basePath: string;
  /** An API key the store accepts. */
  readonly key: string;
  /**
   * Gives an empty store that accepts `key`. Called before every case; `url` is read after it, so
   * it may start a new server.
   */
  reset(): void | Promise<void>;
  /**
   * The origin the target's store allows for CORS (`createPetStore({ cors: { origins: [origin] } })`).
   * Without it, the CORS cases check that no answer carries a CORS header (CORS is off by default).
   */
  readonly cors?: { readonly origin: string } | undefined;
  /**
   * The target store's rate limit (`createPetStore({ rateLimit })`), when it has one: its headers are
   * checked, and its `429` when the limit is 50 or less. Without it, no answer may carry them.
   */
  readonly rateLimit?: { readonly limit: number; readonly windowSeconds: number } | undefined;
  /**
   * A key the store accepts with the `pets:read` scope only (contract 1.4): its create must be
   * `403 insufficient_scope`. Without it, the scope case checks that `key` may list and create.
   */
  readonly readOnlyKey?: string | undefined;
}

/** A server reached over a socket: `url` is its origin, e.g. "http://127.0.0.1:3000". */
export interface SocketTarget extends TargetBase {
  readonly url: string;
}

/** A Web-standard handler called in process, e.g. `createFetchHandler(store)`. */
export interface FetchTarget extends TargetBase {
  fetch(request: Request): Promise<Response>;
}

export type ConformanceTarget = SocketTarget | FetchTarget;

/** A request as a case writes it. `path` includes the base path and the query string. */
export interface Req {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** An answer: lower-case header names, body as text (decoded when the target compressed it). */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body's length as it came, when the target compressed it (`Content-Encoding`). */
  codedBytes?: number;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const encoder = new TextEncoder();

const byteLength = (body: string | Uint8Array) =>
  typeof body === "string" ? encoder.encode(body).length : body.length;

/** Lower-case header names, and a Content-Length unless the body is chunked: as sent on the wire. */
function wire(req: Req): Req {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) headers[name.toLowerCase()] = value;
  if (req.body !== undefined && headers["transfer-encoding"] === undefined && headers["content-length"] === undefined) {
    headers["content-length"] = String(byteLength(req.body));
  }
  return { ...req, headers };
}

/** A Node built-in, taken when needed (a browser, where fetch targets run, has none). */
async function loadBuiltin<T>(name: string): Promise<T> {
  const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const found = host?.getBuiltinModule?.(name);
  if (found !== undefined) return found as T;
  return (await import(/* webpackIgnore: true */ /* @vite-ignore */ name)) as T;
}

/** A compressed body decoded, by its `Content-Encoding` (zstd where this Node has it). */
function decode(zlib: Zlib, coding: string, bytes: Buffer): Buffer {
  const zstd = (zlib as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;
  if (coding === "gzip" || coding === "x-gzip") return zlib.gunzipSync(bytes);
  if (coding === "br") return zlib.brotliDecompressSync(bytes);
  if (coding === "deflate") return zlib.inflateSync(bytes);
  if (coding === "zstd" && zstd !== undefined) return zstd(bytes);
  throw new Error(`the answer is coded with ${coding}, which this Node cannot decode`);
}

function overSocket(http: Http, zlib: Zlib, url: string, req: Req, agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(req.path, url), {
      method: req.method,
      headers: req.headers,
      agent,
      timeout: 10_000,
    });
    request.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
        }
        const bytes = Buffer.concat(chunks);
        const coding = headers["content-encoding"];
        if (coding === undefined || bytes.length === 0) {
          return resolve({ status: res.statusCode ?? 0, headers, body: bytes.toString("utf8") });
        }
        try {
          const body = decode(zlib, coding, bytes).toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers, body, codedBytes: bytes.length });
        } catch (error) {
          reject(error);
        }
      });
    });
    request.on("error", reject);
    request.on("timeout", () => request.destroy(new Error(`no answer to ${req.method} ${req.path} within 10 s`)));
    if (req.body !== undefined) request.write(req.body);
    request.end();
  });
}

async function inProcess(target: FetchTarget, req: Req): Promise<Answer> {
  const chunked = req.headers["transfer-encoding"] !== undefined;
  let body: Uint8Array | ReadableStream<Uint8Array> | undefined;
  if (req.body !== undefined) {
    const bytes = typeof req.body === "string" ? encoder.encode(req.body) : req.body;
    // A chunked body arrives as a stream, in pieces, with no announced length.
    body = chunked
      ? new ReadableStream<Uint8Array>({
          start(controller) {
            for (let i = 0; i < bytes.length; i += 16_384) controller.enqueue(bytes.slice(i, i + 16_384));
            controller.close();
          },
        })
      : bytes.slice();
  }
  const init: RequestInit & { duplex?: "half" } = { method: req.method, headers: req.headers };
  if (body !== undefined) {
    init.body = body;
    init.duplex = "half";
  }
  const request = new Request(new URL(req.path, "http://conformance.test"), init);
  // A browser's Request drops the headers a page may not set (Origin, Content-Length,
  // Access-Control-Request-*): the target gets them as a server's Request carries them.
  if (Object.keys(req.headers).some((name) => !request.headers.has(name))) {
    Object.defineProperty(request, "headers", { value: new Headers(req.headers) });
  }
  const response = await target.fetch(request);
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  return { status: response.status, headers, body: await response.text() };
}

/** A strong entity tag (RFC 9110 §8.8.3), as pets and pages carry. */
export const STRONG_TAG = /^"[!#-~]+"$/;
/** What a caller's pet, page or create may say to caches: private, revalidated or for a while. */
const KEPT = /^private, (no-cache|max-age=[0-9]+)(, no-transform)?$/;
const NOT_KEPT = /^no-store(, no-transform)?$/;

/** The checks every answer of the API owes the contract, whatever the case. */
export function checkEveryAnswer(req: Req, answer: Answer): void {
  const h = answer.headers;
  if (answer.status === 204) {
    // A CORS preflight's answer: no body, so no content type or length.
    assert.match(h["x-request-id"] ?? "", REQUEST_ID, "x-request-id");
    assert.equal(answer.body, "", "a 204 has no body");
    assert.equal(h["content-length"] ?? "0", "0", "a 204 announces no body");
    return;
  }
  if (answer.status === 304) {
    // RFC 9110 §15.4.5: no body, no type, the validator and what caches may do with it.
    assert.equal(answer.body, "", "a 304 has no body");
    assert.equal(h["content-type"], undefined, "a 304 has no content type");
    assert.match(h.etag ?? "", STRONG_TAG, "a 304 names the answer it confirms");
  } else {
    assert.equal(h["content-type"], "application/json; charset=utf-8", "content-type");
  }
  // A caller's 2xx (and 304) may be kept by its browser (private); errors and the public document never.
  const kept = answer.status < 400 && req.headers.authorization !== undefined;
  assert.match(h["cache-control"] ?? "", kept ? KEPT : NOT_KEPT, "cache-control");
  assert.match(h["x-request-id"] ?? "", REQUEST_ID, "x-request-id");
  assert.equal(h["x-powered-by"], undefined, "no X-Powered-By");
  assert.equal(h.server, undefined, "no Server banner");
  if (answer.status === 304) return;
  if (req.method === "HEAD") assert.equal(answer.body, "", "HEAD has no body");
  else if (h["content-encoding"] === undefined) {
    assert.equal(h["content-length"], String(byteLength(answer.body)), "content-length");
  } else if (answer.codedBytes !== undefined && h["content-length"] !== undefined) {
    assert.equal(h["content-length"], String(answer.codedBytes), "content-length (of the coded body)");
  }
  if (answer.status >= 400 && req.method !== "HEAD") {
    const body = JSON.parse(answer.body);
    assert.equal(body.status, answer.status, "the Error body's status is the HTTP status");
    assert.ok(!/\bat .*:\d+:\d+|node_modules|\/work\//.test(answer.body), "no stack trace or file path");
  }
}

/** What a case uses: the target's base path and key, `send`, and `seed` through public POSTs. */
export interface Client {
  readonly base: string;
  readonly key: string;
  /** The origin the target's store allows for CORS, when it has one. */
  readonly corsOrigin: string | undefined;
  /** The target's rate limit, when it has one. */
  readonly rateLimit: { readonly limit: number; readonly windowSeconds: number } | undefined;
  /** The target's read-only key, when it has one. */
  readonly readOnlyKey: string | undefined;
  send(req: Req): Promise<Answer>;
  /** Creates `count` pets through POST (names "pet-1", "pet-2", … in creation order). */
  seed(count: number, status?: "available" | "pending" | "sold"): Promise<void>;
}

/** Runs one case body on a target: reset, then the case, each answer checked on the way. */
export async function onTarget(target: ConformanceTarget, body: (client: Client) => Promise<void>): Promise<void> {
  if (target === null || typeof target !== "object" || typeof target.reset !== "function") {
    throw new TypeError(
      "conformance: a target is { basePath, key, reset(), url } or { basePath, key, reset(), fetch }",
    );
  }
  const base = target.basePath === "/" ? "" : target.basePath;
  await target.reset();
  const http = "fetch" in target ? undefined : await loadBuiltin<Http>("node:http");
  const zlib = http === undefined ? undefined : await loadBuiltin<Zlib>("node:zlib");
  const agent = http === undefined ? undefined : new http.Agent({ keepAlive: true, maxSockets: 1 });
  let seeded = 0;
  const client: Client = {
    base,
    key: target.key,
    corsOrigin: target.cors?.origin,
    rateLimit: target.rateLimit,
    readOnlyKey: target.readOnlyKey,
    async send(req) {
      const sent = wire(req);
      let answer: Answer;
      try {
        answer =
          http === undefined || agent === undefined || zlib === undefined
            ? await inProcess(target as FetchTarget, sent)
            : await overSocket(http, zlib, (target as SocketTarget).url, sent, agent);
        checkEveryAnswer(sent, answer);
      } catch (error) {
        if (error instanceof Error) error.message = `${req.method} ${req.path}: ${error.message}`;
        throw error;
      }
      return answer;
    },
    async seed(count, status) {
      for (let i = 0; i < count; i++) {
        seeded++;
        const pet = JSON.stringify({ name: `pet-${seeded}`, categoryId: 1, ...(status ? { status } : {}) });
        const headers = { authorization: `Bearer ${target.key}`, "content-type": "application/json" };
        const answer = await client.send({ method: "POST", path: `${base}/pets`, headers, body: pet });
        assert.equal(answer.status, 201, `seeding pet-${seeded}: ${answer.body}`);
      }
    },
  };
  try {
    await body(client);
  } finally {
    agent?.destroy();
  }
}
