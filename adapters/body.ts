/**
 * Reading a request body from a Node stream for the core's BodyReader: streamed, refused as
 * soon as it passes the limit, and never a hang when the client goes away. Shared by the
 * Node http adapter and the hapi plugin so that both read bodies the same way.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import { PetStoreError } from "../lib/errors.ts";

const EMPTY = new Uint8Array(0);

/** True when the request announces a body (a non-zero Content-Length, or Transfer-Encoding). */
export function announcesBody(headers: IncomingHttpHeaders): boolean {
  const length = headers["content-length"];
  return (length !== undefined && length !== "0") || headers["transfer-encoding"] !== undefined;
}

/**
 * True when an answer sent now must say `Connection: close`: the body is not (fully) in yet and
 * is not known to be small, so draining it could mean reading an unbounded upload.
 */
export function mustClose(stream: Readable & { complete?: boolean }, headers: IncomingHttpHeaders, limit: number) {
  if (stream.complete || stream.readableEnded || !announcesBody(headers)) return false;
  const length = headers["content-length"];
  return length === undefined || !/^[0-9]+$/.test(length) || Number(length) > limit;
}

/** True when an answer can no longer be written: already sent, or the client went away. */
export function cannotAnswer(req: IncomingMessage, res: ServerResponse): boolean {
  return res.headersSent || res.destroyed || req.socket?.destroyed === true;
}

/**
 * One body being read. A class rather than closures: tsx (which runs `npm start`) names every
 * closure it creates with `Object.defineProperty`, about a microsecond each, on every request.
 */
class Collector {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly onData = this.data.bind(this);
  private readonly onEnd = this.end.bind(this);
  private readonly onGone = this.gone.bind(this);

  constructor(
    private readonly stream: Readable,
    private readonly limit: number,
    private readonly resolve: (body: Uint8Array) => void,
    private readonly reject: (error: PetStoreError) => void,
  ) {
    stream.on("data", this.onData);
    stream.on("end", this.onEnd);
    stream.on("error", this.onGone);
    stream.on("close", this.onGone);
  }

  private stop(): void {
    this.stream.removeListener("data", this.onData);
    this.stream.removeListener("end", this.onEnd);
    this.stream.removeListener("error", this.onGone);
    this.stream.removeListener("close", this.onGone);
  }

  private data(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.stop();
      this.reject(new PetStoreError("payload_too_large"));
    } else this.chunks.push(chunk);
  }

  private end(): void {
    this.stop();
    const { chunks, size } = this;
    this.resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
  }

  private gone(): void {
    this.stop();
    this.reject(new PetStoreError("invalid_body", "The request body was cut short."));
  }
}

/**
 * The whole body when all of it waits in the stream's buffer (as many bytes as a request's
 * Content-Length announced); undefined otherwise.
 */
function buffered(stream: Readable & { headers?: IncomingHttpHeaders }, limit: number): Uint8Array | undefined {
  const length = stream.headers?.["content-length"];
  if (length === undefined || stream.readableFlowing === true) return undefined;
  const size = stream.readableLength;
  if (size === 0 || size > limit || String(size) !== length) return undefined;
  return (stream.read() as Buffer | null) ?? undefined; // everything buffered, at once (the stream is paused)
}

/**
 * Reads the whole body, rejecting with `payload_too_large` as soon as more than `limit` bytes
 * arrive (the rest then flows to nowhere). A client that disconnects mid-body gets
 * `invalid_body`: there is nobody left to read the answer, and it must not look unexpected.
 *
 * It looks one microtask later, once Node's parser is through what arrived with the headers:
 * a small body is then usually all in the stream's buffer and is taken at once, without
 * listeners and the ticks of a flowing stream.
 */
export function readBody(stream: Readable, limit: number): Promise<Uint8Array> {
  if (stream.readableEnded || stream.destroyed) return Promise.resolve(EMPTY);
  return Promise.resolve(stream).then(
    (s) => buffered(s, limit) ?? new Promise((resolve, reject) => void new Collector(s, limit, resolve, reject)),
  );
}
