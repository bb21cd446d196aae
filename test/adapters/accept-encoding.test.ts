/**
 * Negotiating a content coding from `Accept-Encoding` (adapters/accept-encoding.ts, RFC 9110
 * §12.5.3): the highest q wins, a tie goes to the server's order (zstd, br, gzip), identity wins
 * only when the client prefers it, and nothing the client refuses is ever chosen.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { preferredCoding } from "../../adapters/accept-encoding.ts";
import { CODINGS } from "../../adapters/compression.ts";

const ALL = ["zstd", "br", "gzip"] as const;

test("accept-encoding: among codings of equal weight, the server's order decides: zstd, then br, then gzip", () => {
  assert.is(preferredCoding("gzip, deflate, br, zstd", ALL), "zstd");
  assert.is(preferredCoding("gzip, br", ALL), "br");
  assert.is(preferredCoding("gzip", ALL), "gzip");
  assert.is(preferredCoding("*", ALL), "zstd");
});

test("accept-encoding: a higher q wins over the server's order; q=0 is never chosen", () => {
  assert.is(preferredCoding("br;q=0.5, gzip", ALL), "gzip");
  assert.is(preferredCoding("zstd;q=0.1, br;q=0.9, gzip;q=0.8", ALL), "br");
  assert.is(preferredCoding("zstd;q=0, br;q=0, gzip", ALL), "gzip");
  assert.is(preferredCoding("*;q=0.5, gzip;q=1", ALL), "gzip");
  assert.is(preferredCoding("*, zstd;q=0", ALL), "br");
  assert.is(preferredCoding("gzip;q=0", ALL), undefined);
});

test("accept-encoding: names and parameters in any case, with white space; x-gzip is gzip", () => {
  assert.is(preferredCoding(" GZIP ; Q=0.7 , Br ; q=0.8 ", ALL), "br");
  assert.is(preferredCoding("x-gzip", ALL), "gzip");
  assert.is(preferredCoding(["gzip;q=0.2", "br;q=0.3"], ALL), "br", "a header given twice is one list");
});

test("accept-encoding: the plain answer when the client prefers identity, asks for nothing we write, or says nothing", () => {
  assert.is(preferredCoding(undefined, ALL), undefined);
  assert.is(preferredCoding("", ALL), undefined);
  assert.is(preferredCoding("identity", ALL), undefined);
  assert.is(preferredCoding("deflate, compress", ALL), undefined);
  assert.is(preferredCoding("identity;q=1, gzip;q=0.5", ALL), undefined);
  assert.is(preferredCoding("identity;q=0.5, gzip", ALL), "gzip");
});

test("accept-encoding: a malformed weight makes its member unacceptable, not the whole header", () => {
  assert.is(preferredCoding("br;q=2, gzip", ALL), "gzip");
  assert.is(preferredCoding("br;q=0.55555, gzip;q=0.5", ALL), "gzip");
  assert.is(preferredCoding("br;q=abc", ALL), undefined);
});

test("accept-encoding: this Node writes br and gzip, and zstd where zlib has it, in that one order", () => {
  const hasZstd = typeof (process.versions as Record<string, string | undefined>).zstd === "string";
  assert.equal(CODINGS, hasZstd ? ["zstd", "br", "gzip"] : ["br", "gzip"]);
});

test.run();
