/**
 * The client's address, for throttling failed authentications: the socket's, as the adapter hands
 * it in (`PetStoreRequest.clientAddress`), or, behind a proxy the operator trusts, the last hop of
 * `X-Forwarded-For` (the address that proxy saw; earlier hops are the client's own words).
 */
import type { HeaderValue, PetStoreRequest } from "../http.ts";

/** An IPv4 address as Node gives it on a dual-stack socket ("::ffff:127.0.0.1") is the IPv4 address. */
function plain(address: string): string {
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

/** The last hop of X-Forwarded-For (a repeated header's values are one list), or undefined. */
function lastHop(header: HeaderValue): string | undefined {
  const joined = Array.isArray(header) ? header.join(",") : header;
  if (joined === undefined) return undefined;
  const hop = joined.slice(joined.lastIndexOf(",") + 1).trim();
  return hop === "" || hop.length > 64 ? undefined : hop;
}

/**
 * Where a request comes from, or undefined when the adapter does not know (in-process `handle`).
 * @example clientAddressOf({ …, clientAddress: "::ffff:10.0.0.1" }, headers, false) // "10.0.0.1"
 */
export function clientAddressOf(
  request: PetStoreRequest,
  headers: Readonly<Record<string, HeaderValue>>,
  trustProxy: boolean,
): string | undefined {
  const forwarded = trustProxy ? lastHop(headers["x-forwarded-for"]) : undefined;
  const address = forwarded ?? request.clientAddress;
  return typeof address === "string" && address !== "" ? plain(address) : undefined;
}
