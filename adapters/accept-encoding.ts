/**
 * Which content coding a client accepts best (RFC 9110 §12.5.3), among those a server can write:
 * the highest `q` wins, a tie goes to the earlier coding of the server's list, and `identity` wins
 * when the client gives it a higher `q` than any coding (it is acceptable unless excluded, so a
 * client that accepts nothing we write still gets an answer: the plain one).
 */
import type { HeaderValue } from "../lib/adapter.ts";

/** A `q` parameter's value as RFC 9110 §12.4.2 writes it (`0`, `0.5`, `1.000`). */
const QVALUE = /^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/;

/** The weight of one member's parameters: its `q`, 1 without one, 0 when it is malformed. */
function weightOf(params: string[]): number {
  for (const param of params) {
    const eq = param.indexOf("=");
    if (eq === -1 || param.slice(0, eq).trim().toLowerCase() !== "q") continue;
    const value = param.slice(eq + 1).trim();
    return QVALUE.test(value) ? Number(value) : 0;
  }
  return 1;
}

/**
 * The coding of `codings` (in the server's order of preference) the client's `Accept-Encoding`
 * accepts best, or undefined for the plain answer.
 *
 * @example preferredCoding("gzip;q=0.8, br", ["zstd", "br", "gzip"]) // "br"
 */
export function preferredCoding<C extends string>(acceptEncoding: HeaderValue, codings: readonly C[]): C | undefined {
  if (acceptEncoding === undefined) return undefined;
  const header = typeof acceptEncoding === "string" ? acceptEncoding : acceptEncoding.join(",");
  const weights = new Map<string, number>();
  for (const member of header.split(",")) {
    const [rawName = "", ...params] = member.split(";");
    const name = rawName.trim().toLowerCase();
    if (name === "") continue;
    // x-gzip is gzip (RFC 9110 §8.4.1.3); of a name given twice, the first counts.
    const key = name === "x-gzip" ? "gzip" : name;
    if (!weights.has(key)) weights.set(key, weightOf(params));
  }
  const any = weights.get("*");
  let best: C | undefined;
  let bestWeight = 0;
  for (const coding of codings) {
    const weight = weights.get(coding) ?? any ?? 0;
    if (weight > bestWeight) {
      best = coding;
      bestWeight = weight;
    }
  }
  const identity = weights.get("identity");
  return identity !== undefined && identity > bestWeight ? undefined : best;
}
