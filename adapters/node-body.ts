/**
 * The Node stream helpers an adapter needs, public through `petstore-lib/node-http`: reading a
 * request body for the core's BodyReader (streamed, refused as soon as it passes the limit, never a
 * hang when the client goes away), whether a request announces a body, and whether an early
 * response must close the connection. The Node http adapter and the hapi plugin use them.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import type { BodyReader, PetStoreRequest } from "../lib/index.ts";
import { PetStoreError } from "../lib/index.ts";

const EMPTY = new Uint8Array(0);

/**
 * The core's request for a raw request target as Node gives it (`/v1/pets?limit=5`): the path and
 * the query string apart, the headers as they are, the body as the given reader. Pass the
 * request's `rawHeaders` too: Node's `headers` keep only the first of several Authorization
 * headers, which the core must see to refuse them (400 invalid_request).
 *
 * @example nodeRequest(req.method, req.url, req.headers, reader, req.rawHeaders)
 */
export function nodeRequest(
  method: string,
  url: string,
  headers: IncomingHttpHeaders,
  body: BodyReader | undefined,
  rawHeaders?: readonly string[],
): PetStoreRequest {
  const q = url.indexOf("?");
  const authorization = rawHeaders === undefined ? undefined : repeatedAuthorization(rawHeaders);
  return {
    method,
    path: q === -1 ? url : url.slice(0, q),
    query: q === -1 ? "" : url.slice(q + 1),
    headers: authorization === undefined ? headers : { ...headers, authorization },
    body,
  };
}

/** Every Authorization value of a raw header list when there are several, else undefined. */
function repeatedAuthorization(rawHeaders: readonly string[]): string[] | undefined {
  let first: string | undefined;
  let values: string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    // Most names are not 13 characters long: only those are compared.
    if (name.length !== 13 || name.toLowerCase() !== "authorization") continue;
    const value = rawHeaders[i + 1] as string;
    if (first === undefined) first = value;
    else if (values === undefined) values = [first, value];
    else values.push(value);
  }
  return values;
}

/** True when the request announces a body (a non-zero Content-Length, or Transfer-Encoding). */
export function announcesBody(headers: IncomingHttpHeaders): boolean {
  const length = headers["content-length"];
  return (length !== undefined && length !== "0") || headers["transfer-encoding"] !== undefined;
}

/**
 * True when a response sent now must say `Connection: close`: the body is not (fully) in yet and
 * is not known to be small, so draining it could mean reading an unbounded upload.
 */
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
    const stop = () => {
      stream.removeListener("data", onData);
      stream.removeListener("end", onEnd);
      stream.removeListener("error", onGone);
      stream.removeListener("close", onGone);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else {
        stop();
        reject(new PetStoreError("payload_too_large"));
      }
    };
    const onEnd = () => {
      stop();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onGone = () => {
      stop();
      reject(new PetStoreError("invalid_body", "The request body was cut short."));
    };
    stream.on("data", onData);
    stream.on("end", onEnd);
    stream.on("error", onGone);
    stream.on("close", onGone);
  });
}

/**
 * The whole body when all of it waits in the stream's buffer (as many bytes as a request's
 * Content-Length announced), taken from it; undefined otherwise. Not public: the Node adapter's
 * own shortcut (see bodyOf in ./node-http.ts).
 */
export function buffered(stream: Readable & { headers?: IncomingHttpHeaders }, limit: number): Uint8Array | undefined {
  const length = stream.headers?.["content-length"];
  if (length === undefined || stream.readableFlowing === true) return undefined;
  const size = stream.readableLength;
  if (size === 0 || size > limit || String(size) !== length) return undefined;
  return (stream.read() as Buffer | null) ?? undefined; // everything buffered, at once (the stream is paused)
}

/**
 * Reads the whole body, rejecting with `payload_too_large` as soon as more than `limit` bytes
 * arrive (the rest then flows to nowhere). A client that disconnects mid-body gets
 * `invalid_body`: there is nobody left to read the response, and it must not look unexpected.
 *
 * It looks one microtask later, once Node's parser is through what arrived with the headers:
 * a small body is then usually all in the stream's buffer and is taken at once, without
 * listeners and the ticks of a flowing stream.
 */
export function readBody(stream: Readable, limit: number): Promise<Uint8Array> {
  if (stream.readableEnded || stream.destroyed) return Promise.resolve(EMPTY);
  // Resolved with nothing, not with the stream: resolving with an object looks up its `then`
  // through the stream's whole prototype chain.
  return Promise.resolve().then(() => buffered(stream, limit) ?? collect(stream, limit));
}
