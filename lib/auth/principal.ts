/**
 * Who is calling: the principal a verifier answers, `{ id, scopes }`, and the API's scopes
 * (`pets:read` for listPets and getPet, `pets:write` for createPet). A verifier may still answer a
 * boolean: `true` is a principal with every scope, named after a digest of its token.
 */
import { isPromise } from "../awaitable.ts";
import { sha256Base64url } from "../digest.ts";

/** A scope of the API: `pets:read` (listPets, getPet) or `pets:write` (createPet). */
export type Scope = "pets:read" | "pets:write";

/** Every scope of the API, in the order the OpenAPI document lists them. */
export const SCOPES: readonly Scope[] = Object.freeze(["pets:read", "pets:write"] as Scope[]);

/** The caller a verifier accepted: its id (logs, spans, rate limits) and the scopes it holds. Never a token. */
export interface Principal {
  /** A name for the caller: a key's name, a token's `sub`; 1 to 255 characters, none of them a control character. */
  readonly id: string;
  /** What it may do: `pets:read`, `pets:write` (other scopes are kept and ignored). */
  readonly scopes: readonly string[];
}

/** A verifier's answer: a principal, `true` (every scope) or `false` (refused). */
export type Verdict = boolean | Principal;

/** Decides whether a bearer token is acceptable, and who it is. May be async (a lookup, a key set). */
export type VerifyToken = (token: string) => Verdict | Promise<Verdict>;

/** What a store asks of its verifiers once checked: the caller's principal, or false. */
export type FindPrincipal = (token: string) => Principal | false | Promise<Principal | false>;

/** The longest principal id: ids end up in rate-limit keys and log lines. */
const MAX_ID = 255;

/**
 * The id of a caller known only by its token: `key:` and the start of the token's SHA-256
 * (72 bits, base64url): stable per token, and nothing of the token itself.
 */
export function tokenId(token: string): string {
  return `key:${sha256Base64url(token).slice(0, 12)}`;
}

/** True when `id` can name a principal: a string of 1 to 255 characters without control characters. */
export function isPrincipalId(id: unknown): id is string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  return typeof id === "string" && id.length > 0 && id.length <= MAX_ID && !/[\u0000-\u001f\u007f]/.test(id);
}

/**
 * A principal with every scope, for a verifier that answered `true` or a key given without scopes.
 * @example everyScope("ci") // { id: "ci", scopes: ["pets:read", "pets:write"] }
 */
export function everyScope(id: string): Principal {
  return Object.freeze({ id, scopes: SCOPES });
}

/**
 * The principal of a verdict, false when it refuses. A verdict that is neither a boolean nor a
 * principal is a mistake of the verifier: a TypeError (answered 500 and reported).
 */
export function principalOf(verdict: unknown, token: string): Principal | false {
  if (verdict === true) return everyScope(tokenId(token));
  if (verdict === false || verdict === undefined || verdict === null) return false;
  const { id, scopes } = verdict as Partial<Principal>;
  if (!isPrincipalId(id) || !Array.isArray(scopes) || !scopes.every((s) => typeof s === "string")) {
    throw new TypeError(
      "auth: a verifier must answer true, false or a principal { id, scopes } (id: 1 to 255 characters without control characters; scopes: a list of strings)",
    );
  }
  return verdict as Principal;
}

/** A verifier of the embedder's, its answers checked and made principals (`principalOf`). */
export function findPrincipalWith(verify: VerifyToken): FindPrincipal {
  return (token) => {
    const verdict = verify(token);
    if (isPromise(verdict)) return verdict.then((v) => principalOf(v, token));
    return principalOf(verdict, token);
  };
}

/** True when the principal holds `scope`. */
export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes === SCOPES || principal.scopes.includes(scope);
}
