/**
 * `createPetStore({ auth })`, checked once: the verifiers (a list of keys, functions, `jwt()`),
 * tried in order until one accepts the token; the limit of failed authentications per client
 * address; whether `X-Forwarded-For` comes from a proxy the operator trusts; and the token issuers
 * the OpenAPI document names.
 */
import type { Awaitable } from "../awaitable.ts";
import { isPromise } from "../awaitable.ts";
import type { JwtVerifier } from "./jwt.ts";
import type { ApiKey } from "./keys.ts";
import { keyPrincipals, principalsOf } from "./keys.ts";
import type { FindPrincipal, Principal, VerifyToken } from "./principal.ts";
import { findPrincipalWith } from "./principal.ts";
import type { FailureLimitOptions } from "./throttle.ts";
import { checkFailureLimit } from "./throttle.ts";

/** `auth` as an object: keys and verifiers together, and the throttling of failed authentications. */
export interface AuthSettings {
  /** API keys: strings (every scope) or named, scoped keys (`ApiKey`). */
  keys?: readonly (string | ApiKey)[];
  /** Verifiers tried after the keys, in order: your own functions, `jwt(…)`. */
  verify?: VerifyToken | readonly VerifyToken[];
  /**
   * Failed authentications per client address before it is refused `429 rate_limited` (default
   * 30 a minute): a number (per minute), `{ limit, windowSeconds, onThrottled }`, or `false` (off).
   */
  failureLimit?: number | FailureLimitOptions | false;
  /** True behind a proxy you trust: the client address is then X-Forwarded-For's last hop. Default false. */
  trustProxy?: boolean;
}

/** What `createPetStore({ auth })` accepts: a verify function, a list of keys, or `AuthSettings`. */
export type AuthOption = VerifyToken | readonly (string | ApiKey)[] | AuthSettings;

/** `auth` once checked. */
export interface CheckedAuth {
  /** The verifiers in order, each answering a checked principal or false. */
  verify: FindPrincipal;
  failureLimit: FailureLimitOptions | undefined;
  trustProxy: boolean;
  /** The discovery documents of the token issuers (`jwt()` verifiers), for the OpenAPI document. */
  openIdConfigurationUrls: string[];
}

const REQUIRED =
  "createPetStore: `auth` is required: a list of API keys, apiKeys([...]), jwt({ issuer, audience }), a verify function (token) => boolean, or { keys, verify, failureLimit, trustProxy }";
const KNOWN = ["keys", "verify", "failureLimit", "trustProxy"];

/** The first principal `verifiers` find, in order; each asked only when those before refused. */
export function firstOf(verifiers: readonly FindPrincipal[]): FindPrincipal {
  if (verifiers.length === 1) return verifiers[0] as FindPrincipal;
  return (token) => {
    const next = (at: number): Awaitable<Principal | false> => {
      const verifier = verifiers[at];
      if (verifier === undefined) return false;
      const found = verifier(token);
      if (isPromise(found)) return found.then((p) => (p === false ? next(at + 1) : p));
      return found === false ? next(at + 1) : found;
    };
    return next(0);
  };
}

/** Checks `auth`: a TypeError naming what is wrong. */
export function checkAuth(auth: AuthOption | undefined): CheckedAuth {
  let settings: AuthSettings;
  if (typeof auth === "function") settings = { verify: auth };
  else if (Array.isArray(auth)) settings = { keys: auth };
  else if (auth !== null && typeof auth === "object") settings = auth as AuthSettings;
  else throw new TypeError(REQUIRED);
  for (const name of Object.keys(settings)) {
    if (!KNOWN.includes(name))
      throw new TypeError(`createPetStore: unknown auth option "${name}" (known: ${KNOWN.join(", ")})`);
  }
  const given =
    settings.verify === undefined ? [] : Array.isArray(settings.verify) ? settings.verify : [settings.verify];
  if (!given.every((v) => typeof v === "function")) {
    throw new TypeError(
      "createPetStore: auth.verify must be a verify function (token) => boolean | principal, or a list of them",
    );
  }
  // Keys answer principals made when they were checked; an embedder's verifier has each answer checked.
  // apiKeys(…) answers `true` for a plain key: the store asks the verifier behind it instead.
  const verifiers: FindPrincipal[] = settings.keys === undefined ? [] : [keyPrincipals(settings.keys)];
  verifiers.push(...(given as VerifyToken[]).map((v) => principalsOf(v) ?? findPrincipalWith(v)));
  if (verifiers.length === 0) throw new TypeError(REQUIRED);
  if (settings.trustProxy !== undefined && typeof settings.trustProxy !== "boolean") {
    throw new TypeError("createPetStore: auth.trustProxy must be true or false");
  }
  const issuers = (given as Partial<JwtVerifier>[])
    .map((v) => v.openIdConfigurationUrl)
    .filter((url): url is string => typeof url === "string");
  return {
    verify: firstOf(verifiers),
    failureLimit: checkFailureLimit(settings.failureLimit),
    trustProxy: settings.trustProxy === true,
    openIdConfigurationUrls: issuers,
  };
}
