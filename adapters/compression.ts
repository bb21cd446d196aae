/**
 * The Node adapter's compression (contract 1.4): an answer of 1 KiB or more goes out in the coding
 * the client accepts best of zstd (where this Node has it), br and gzip, in that order; it says
 * `Vary: Accept-Encoding` whether compressed or not (pets and pages always do), since its coding
 * depends on that header; and a compressed answer has an `ETag` of its own (`"tag-br"`), a strong
 * validator per representation, which `If-None-Match` may send back. An answer that says
 * `no-transform` is never compressed. Answers are compressed with zlib's synchronous calls: for
 * bodies this small they cost a fraction of the callback ones, which hand each to the thread pool
 * (bench/README.md, V2).
 */
import * as zlib from "node:zlib";
import type { HeaderValue } from "../lib/adapter.ts";
import type { PetStoreResponse } from "../lib/index.ts";
import { preferredCoding } from "./accept-encoding.ts";
import { codedTag, tagHeld } from "./coded-tags.ts";

export type Coding = "zstd" | "br" | "gzip";

/** Answers below this many bytes go out as they are: their coding could save little and costs a round of zlib. */
export const MIN_BYTES = 1024;

type Compress = (data: string) => Buffer;

const { constants } = zlib;
const zstd = (zlib as { zstdCompressSync?: Compress }).zstdCompressSync;

/** How each coding is written: zlib's default gzip level, brotli's quality 4 and zstd's level 3 (fast enough for answers made per request). */
const COMPRESSORS: Record<Coding, Compress | undefined> = {
  zstd,
  br: (data) =>
    zlib.brotliCompressSync(data, {
      params: {
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_QUALITY]: 4,
        [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
      },
    }),
  gzip: (data) => zlib.gzipSync(data),
};

/** The codings this Node writes, in the one order of preference (zstd only where zlib has it: Node 22.15 and later). */
export const CODINGS: readonly Coding[] = (["zstd", "br", "gzip"] as const).filter((c) => COMPRESSORS[c] !== undefined);

/** The coding the client accepts best, or undefined for the plain answer. */
export function codingFor(acceptEncoding: HeaderValue): Coding | undefined {
  return preferredCoding(acceptEncoding, CODINGS);
}

/** True when the answer's body (its 200's, for HEAD and 304) is large enough to code, and may be. */
export function isCodable(response: PetStoreResponse): boolean {
  const { headers } = response;
  const length = headers["content-length"];
  if (response.status === 204 || length === undefined || Number(length) < MIN_BYTES) return false;
  return !/(?:^|[\s,])no-transform(?:$|[\s,])/i.test(headers["cache-control"] ?? "");
}

/**
 * Codes a codable answer (see isCodable) for a client that accepts `coding`: says so in its
 * headers (`Vary`, and for a coded answer `Content-Encoding`, its own `ETag`, its length) and gives
 * the body to send: the text as it was, or the compressed bytes. A `304` names the representation
 * the client holds: the coded one when it sent that tag (or `*`), else the plain one. HEAD is
 * labelled as its GET would be, without compressing anything. When zlib fails, the plain answer
 * goes out.
 */
export function encode(
  response: PetStoreResponse,
  coding: Coding | undefined,
  head: boolean,
  ifNoneMatch: HeaderValue,
): string | Buffer {
  const { headers } = response;
  const vary = headers.vary;
  if (vary === undefined) headers.vary = "Accept-Encoding";
  else if (vary !== "Accept-Encoding" && !/\baccept-encoding\b/i.test(vary)) headers.vary = `${vary}, Accept-Encoding`;
  if (coding === undefined) return response.body;
  const etag = headers.etag;
  if (response.status === 304) {
    if (etag !== undefined) headers.etag = tagHeld(etag, coding, ifNoneMatch);
    return response.body;
  }
  let body: Buffer | undefined;
  if (!head) {
    try {
      body = (COMPRESSORS[coding] as Compress)(response.body);
    } catch {
      return response.body;
    }
  }
  headers["content-encoding"] = coding;
  if (etag !== undefined) headers.etag = codedTag(etag, coding);
  if (body === undefined) delete headers["content-length"];
  else headers["content-length"] = String(body.length);
  return body ?? response.body;
}
