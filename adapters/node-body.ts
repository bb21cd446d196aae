/** What every adapter on Node needs (node-http, hapi and Fastify use these), public through `petstore-lib/node-http`. */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import type { BodyReader } from "../lib/adapter.ts";
import { PetStoreError, type PetStoreRequest } from "../lib/index.ts";

const AUTHORIZATION = "authorization";

/**
 * The core's request from a raw target as Node gives it (`/v1/pets?limit=5`), its headers and a
 * body reader. Pass `rawHeaders` too: Node's `headers` keep only the first of several
 * Authorization headers, which the core must see to refuse them (400 invalid_request).
 * @example nodeRequest(req.method, req.url, req.headers, reader, req.rawHeaders)
 */
export function nodeRequest(
  method: string,
  url: string,
  headers: IncomingHttpHeaders,
  body: Uint8Array | BodyReader | undefined,
  rawHeaders?: readonly string[],
): PetStoreRequest {
  const q = url.indexOf("?");
  const authorization = rawHeaders === undefined ? undefined : repeatedAuthorization(rawHeaders);
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? "" : url.slice(q + 1);
  return { method, path, query, headers: authorization === undefined ? headers : { ...headers, authorization }, body };
}

/** Every Authorization value of a raw header list when there are several, else undefined. */
function repeatedAuthorization(rawHeaders: readonly string[]): string[] | undefined {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    // Names of another length are not Authorization: only 13-character names are compared (bench H3).
    if (name.length !== AUTHORIZATION.length || name.toLowerCase() !== AUTHORIZATION) continue;
    values.push(rawHeaders[i + 1] as string);
  }
  return values.length > 1 ? values : undefined;
}

/** True when the request announces a body (a non-zero Content-Length, or Transfer-Encoding). */
export function announcesBody(headers: IncomingHttpHeaders): boolean {
  const length = headers["content-length"];
  return (length !== undefined && length !== "0") || headers["transfer-encoding"] !== undefined;
}

/** True when an answer sent now must say `Connection: close`: the unread rest of the body may be an unbounded upload. */
export function mustClose(stream: Readable & { complete?: boolean }, headers: IncomingHttpHeaders, limit: number) {
  if (stream.complete || stream.readableEnded || !announcesBody(headers)) return false;
  const length = headers["content-length"];
  return length === undefined || !/^[0-9]+$/.test(length) || Number(length) > limit;
}

/** True when a response can no longer be written: already sent, or the client went away. */
export function cannotRespond(req: IncomingMessage, res: ServerResponse): boolean {
  return res.headersSent || res.destroyed || req.socket?.destroyed === true;
}

/** Collects a flowing stream's chunks until its end, refusing past `limit` bytes. */
function collect(stream: Readable, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (error?: PetStoreError) => {
      stream.off("data", onData).off("end", stop).off("error", onGone).off("close", onGone);
      if (error === undefined) resolve(Buffer.concat(chunks, size));
      else reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) stop(new PetStoreError("payload_too_large"));
      else chunks.push(chunk);
    };
    const onGone = () => stop(new PetStoreError("invalid_body", "The request body was cut short."));
    stream.on("data", onData).on("end", stop).on("error", onGone).on("close", onGone); // "end" passes no error
  });
}

/** The whole body when all of it (Content-Length's bytes) waits in the stream's buffer, taken from it; else undefined. */
export function buffered(stream: Readable & { headers?: IncomingHttpHeaders }, limit: number): Uint8Array | undefined {
  const size = stream.readableLength;
  if (stream.readableFlowing === true || size === 0 || size > limit) return undefined;
  if (String(size) !== stream.headers?.["content-length"]) return undefined; // not all of it is in yet
  return (stream.read() as Buffer | null) ?? undefined; // a paused stream's read() gives all it holds
}

/**
 * Reads the whole body, a microtask later (once Node's parser is through what came with the headers):
 * `payload_too_large` past `limit`, `invalid_body` (not an unexpected error) if the client goes away mid-body.
 */
export function readBody(stream: Readable, limit: number): Promise<Uint8Array> {
  if (stream.readableEnded || stream.destroyed) return Promise.resolve(new Uint8Array(0));
  return Promise.resolve().then(() => buffered(stream, limit) ?? collect(stream, limit));
}
