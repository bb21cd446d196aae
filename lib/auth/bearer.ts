/**
 * Reading `Authorization: Bearer <token>` (RFC 6750 section 2.1): the scheme name in any case, a
 * header given more than once told apart, and the answers' `WWW-Authenticate` challenges.
 */

export type Credentials =
  | { kind: "missing" }
  | { kind: "invalid" } // wrong scheme or empty token
  | { kind: "repeated" } // Authorization given more than once
  | { kind: "bearer"; token: string };

const BEARER_SCHEME = /^bearer /i;

/** True when `header` starts with "Bearer " in any case. */
function hasBearerScheme(header: string): boolean {
  return BEARER_SCHEME.test(header);
}

/**
 * True when a header value holds several credentials, one of them Bearer: what two Authorization
 * headers become once joined with ", " (as Web Headers join them). A bearer token never holds a
 * comma (RFC 6750 b64token), while one Digest header may: without a Bearer part it stays one.
 */
function isJoinedBearer(header: string): boolean {
  if (!header.includes(",")) return false;
  return header.split(",").some((part) => /^bearer +\S/i.test(part.trim()));
}

/**
 * Reads `Authorization: Bearer <token>`; the scheme name is case-insensitive. A header given more
 * than once (a list, or values joined with a comma around a Bearer part) is `repeated`.
 */
export function readBearer(header: string | string[] | undefined): Credentials {
  if (header === undefined) return { kind: "missing" };
  if (Array.isArray(header)) {
    if (header.length > 1) return { kind: "repeated" };
    return header.length === 0 ? { kind: "missing" } : readBearer(header[0]);
  }
  if (!hasBearerScheme(header)) {
    if (isJoinedBearer(header)) return { kind: "repeated" };
    return header.trim() === "" ? { kind: "missing" } : { kind: "invalid" };
  }
  const token = header.slice(7).trim();
  if (token === "") return { kind: "invalid" };
  return token.includes(",") ? { kind: "repeated" } : { kind: "bearer", token };
}

/** RFC 6750 section 3's challenges: none without credentials, an error attribute otherwise. */
export const CHALLENGES = {
  missing: { "www-authenticate": 'Bearer realm="petstore"' },
  invalid: { "www-authenticate": 'Bearer realm="petstore", error="invalid_token"' },
  repeated: { "www-authenticate": 'Bearer realm="petstore", error="invalid_request"' },
  "pets:read": { "www-authenticate": 'Bearer realm="petstore", error="insufficient_scope", scope="pets:read"' },
  "pets:write": { "www-authenticate": 'Bearer realm="petstore", error="insufficient_scope", scope="pets:write"' },
} as const;
