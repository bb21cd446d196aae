/**
 * OAuth 2.0 access tokens (JWT, RFC 9068) checked with `jose` against the issuer's published keys:
 * `jwt({ issuer, audience })` is a verifier for `createPetStore({ auth })`. Signatures only from an
 * allow-list of asymmetric algorithms (never `none`, never HMAC: a token "signed" with the public
 * key as an HMAC secret is refused), `iss`, `aud` and `exp` required, `nbf` honoured, a small clock
 * tolerance. The principal is the token's `sub` (or `client_id`) with the scopes of its `scope`
 * claim. Web Crypto only: it runs wherever the core does, Workers included. See docs/auth.md.
 */
import type { JWTPayload } from "jose";
import { jwtVerify } from "jose";
import { checkOptionNames } from "../options.ts";
import { discoveryUrl, KeySetUnavailable, RemoteKeySet } from "./key-set.ts";
import type { Principal, VerifyToken } from "./principal.ts";
import { isPrincipalId } from "./principal.ts";

/** `jwt()`'s options. Only `issuer` and `audience` are required. */
export interface JwtOptions {
  /** The issuer, exactly as tokens name it in `iss` (e.g. "https://tenant.eu.auth0.com/"). */
  issuer: string;
  /** The API's identifier, as tokens name it in `aud` (one, or any of several). */
  audience: string | readonly string[];
  /** The JWKS URL; default: the `jwks_uri` of `{issuer}/.well-known/openid-configuration`. */
  jwksUri?: string;
  /** The signature algorithms accepted (default RS256, PS256, ES256, EdDSA); `none` and HMAC are refused. */
  algorithms?: readonly string[];
  /** Seconds of clock difference allowed on `exp` and `nbf` (default 30). */
  clockToleranceSeconds?: number;
  /** The claim that holds the scopes: a space-separated string or a list (default "scope"). */
  scopeClaim?: string;
  /** The least time between two fetches of the key set for unknown `kid`s, in seconds (default 30). */
  cooldownSeconds?: number;
  /** How old the kept keys may get before they are fetched again in the background, in seconds (default 600). */
  cacheMaxAgeSeconds?: number;
  /** How long past that the last keys keep working while the issuer cannot be reached, in seconds (default 86400). */
  graceSeconds?: number;
  /** The fetch the key set and the discovery document are read with (default: the global fetch). */
  fetch?: (url: string, init: { signal: AbortSignal; headers: Record<string, string> }) => Promise<Response>;
}

/** A verifier of access tokens, with what the OpenAPI document says of its issuer. */
export interface JwtVerifier extends VerifyToken {
  /** The issuer whose tokens it takes. */
  readonly openIdIssuer: string;
  /** The issuer's discovery document (an `openIdConnect` security scheme's URL). */
  readonly openIdConfigurationUrl: string;
  /** The key set's fetches so far (each discovery document counts with its key set). */
  readonly keySetFetches: number;
}

export const DEFAULT_ALGORITHMS: readonly string[] = Object.freeze(["RS256", "PS256", "ES256", "EdDSA"]);
/** The asymmetric signature algorithms of JWA (RFC 7518, RFC 8037) that jose verifies. */
const ASYMMETRIC = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

const KNOWN = [
  "issuer",
  "audience",
  "jwksUri",
  "algorithms",
  "clockToleranceSeconds",
  "scopeClaim",
  "cooldownSeconds",
  "cacheMaxAgeSeconds",
  "graceSeconds",
  "fetch",
];

/** A whole number of seconds from `min`, or the default: a TypeError naming the option otherwise. */
function seconds(name: string, value: unknown, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new TypeError(`jwt: ${name} must be a whole number of seconds from ${min} (got ${JSON.stringify(value)})`);
  }
  return value;
}

/** An absolute http(s) URL, or a TypeError. */
function checkUrl(name: string, value: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof value === "string" ? new URL(value) : undefined;
  } catch {}
  if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new TypeError(`jwt: ${name} must be an http(s) URL (got ${JSON.stringify(value)})`);
  }
  return value as string;
}

function checkAlgorithms(value: unknown): string[] {
  if (value === undefined) return [...DEFAULT_ALGORITHMS];
  if (!Array.isArray(value) || value.length === 0) throw new TypeError("jwt: algorithms must be a non-empty list");
  for (const alg of value) {
    if (!ASYMMETRIC.includes(alg)) {
      throw new TypeError(
        `jwt: algorithm ${JSON.stringify(alg)} is not accepted: only asymmetric signatures (${ASYMMETRIC.join(", ")}); never none or HMAC`,
      );
    }
  }
  return [...value];
}

/** The scopes a claim holds: a space-separated string (RFC 9068's `scope`) or a list of strings. */
function scopesOf(claim: unknown): string[] {
  if (typeof claim === "string") return claim.split(" ").filter((s) => s !== "");
  if (Array.isArray(claim)) return claim.filter((s): s is string => typeof s === "string" && s !== "");
  return [];
}

/** The token's principal: `sub` (RFC 9068), else `client_id`; undefined when neither can name one. */
function principalOfClaims(payload: JWTPayload, scopeClaim: string): Principal | undefined {
  const id = payload.sub ?? payload.client_id;
  if (!isPrincipalId(id)) return undefined;
  return { id, scopes: scopesOf(payload[scopeClaim]) };
}

/** Three base64url parts: anything else is not a JWT, and is refused without a look at the keys. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * A verifier of OAuth 2.0 access tokens issued by `issuer` for `audience`.
 *
 * @example createPetStore({ auth: jwt({ issuer: "https://id.example/", audience: "https://pets.example" }) })
 */
export function jwt(options: JwtOptions): JwtVerifier {
  checkOptionNames("jwt", options, KNOWN);
  const issuer = checkUrl("issuer", options.issuer);
  const { audience, scopeClaim = "scope" } = options;
  const audiences = typeof audience === "string" ? [audience] : audience;
  if (!Array.isArray(audiences) || audiences.length === 0 || !audiences.every((a) => typeof a === "string" && a)) {
    throw new TypeError("jwt: audience must be the API's identifier (a non-empty string) or a list of them");
  }
  if (typeof scopeClaim !== "string" || scopeClaim === "") throw new TypeError("jwt: scopeClaim must be a claim name");
  if (options.fetch !== undefined && typeof options.fetch !== "function") {
    throw new TypeError("jwt: fetch must be a function (url, init) => Promise<Response>");
  }
  const algorithms = checkAlgorithms(options.algorithms);
  const clockTolerance = seconds("clockToleranceSeconds", options.clockToleranceSeconds, 30);
  const keys = new RemoteKeySet({
    issuer,
    jwksUri: options.jwksUri === undefined ? undefined : checkUrl("jwksUri", options.jwksUri),
    cooldownMs: seconds("cooldownSeconds", options.cooldownSeconds, 30) * 1000,
    maxAgeMs: seconds("cacheMaxAgeSeconds", options.cacheMaxAgeSeconds, 600, 1) * 1000,
    graceMs: seconds("graceSeconds", options.graceSeconds, 86_400) * 1000,
    fetch: options.fetch ?? ((url, init) => fetch(url, init)),
    timeoutMs: 5000,
  });
  const verifyOptions = {
    issuer,
    audience: [...audiences],
    algorithms,
    clockTolerance,
    requiredClaims: ["iss", "aud", "exp"],
  };
  const verify = async (token: string): Promise<Principal | false> => {
    if (!JWT_SHAPE.test(token)) return false;
    try {
      const { payload } = await jwtVerify(token, keys.getKey, verifyOptions);
      return principalOfClaims(payload, scopeClaim) ?? false;
    } catch (error) {
      if (error instanceof KeySetUnavailable) throw error; // nothing to check with: a 500, reported
      return false; // expired, not yet valid, another issuer or audience, badly signed, unknown key
    }
  };
  return Object.defineProperties(verify, {
    openIdIssuer: { value: issuer, enumerable: true },
    openIdConfigurationUrl: { value: discoveryUrl(issuer), enumerable: true },
    keySetFetches: { get: () => keys.fetches, enumerable: true },
  }) as JwtVerifier;
}
