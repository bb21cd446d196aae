/**
 * The issuer's published keys (a JWKS), as `jwt()` uses them: found through the issuer's
 * discovery document or given, fetched once and kept; fetched again in the background once they
 * are `maxAgeMs` old, and at once for a token whose `kid` is unknown, but never more than once per
 * cool-down however many such tokens come. While the issuer cannot be reached the last keys keep
 * working for `graceMs`. One key set per verifier: two stores, two verifiers, nothing shared.
 */
import type { JSONWebKeySet, JWTHeaderParameters, JWTVerifyGetKey } from "jose";
import { createLocalJWKSet, errors } from "jose";

/** A key `jwtVerify` checks a signature with (a Web Crypto key). */
type VerifyKey = Awaited<ReturnType<JWTVerifyGetKey>>;

/** Where the keys come from and how long they are kept. */
export interface KeySetOptions {
  issuer: string;
  /** The JWKS URL; undefined: the `jwks_uri` of the issuer's discovery document. */
  jwksUri: string | undefined;
  cooldownMs: number;
  maxAgeMs: number;
  graceMs: number;
  fetch: (url: string, init: { signal: AbortSignal; headers: Record<string, string> }) => Promise<Response>;
  /** How long one fetch may take. */
  timeoutMs: number;
}

/** No keys can be used: none were ever fetched, or the last are older than their grace. Answered 500 and reported. */
export class KeySetUnavailable extends Error {
  constructor(issuer: string, cause: unknown) {
    super(`jwt: the key set of ${issuer} cannot be fetched and no keys are kept: tokens cannot be checked`, { cause });
    this.name = "KeySetUnavailable";
  }
}

/** The issuer's discovery document's URL (OpenID Connect Discovery 1.0, section 4). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
}

/** The keys of one issuer, fetched and kept as described above. */
export class RemoteKeySet {
  private local: JWTVerifyGetKey | undefined;
  /** When the kept keys were fetched (ms since the epoch). */
  private fetchedAt = 0;
  /** When a fetch was last begun: the cool-down counts from here. */
  private triedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;
  private lastError: unknown;
  private uri: string | undefined;
  /** The fetches made so far (for tests and logs). */
  fetches = 0;

  constructor(private readonly options: KeySetOptions) {
    this.uri = options.jwksUri;
  }

  /** What `jwtVerify` calls for the key of a token's header. */
  readonly getKey = async (header: JWTHeaderParameters, token: unknown): Promise<VerifyKey> => {
    const now = Date.now();
    if (this.local === undefined || now - this.fetchedAt > this.options.maxAgeMs + this.options.graceMs) {
      if (now - this.triedAt >= this.options.cooldownMs || this.loading !== undefined) await this.load();
      if (this.local === undefined || Date.now() - this.fetchedAt > this.options.maxAgeMs + this.options.graceMs) {
        this.local = undefined;
        throw new KeySetUnavailable(this.options.issuer, this.lastError);
      }
    } else if (now - this.fetchedAt > this.options.maxAgeMs && now - this.triedAt >= this.options.cooldownMs) {
      void this.load(); // stale: fetched again in the background, the kept keys answer meanwhile
    }
    const local = this.local;
    try {
      return await local(header, token as never);
    } catch (error) {
      // A kid never seen (a key the issuer just published): fetched again, once per cool-down.
      if (!(error instanceof errors.JWKSNoMatchingKey) || Date.now() - this.triedAt < this.options.cooldownMs) {
        if (this.loading === undefined) throw error;
      }
      await this.load();
      if (this.local === local) throw error;
      return (this.local as JWTVerifyGetKey)(header, token as never);
    }
  };

  /** Fetches the keys (the discovery document first when needed); concurrent callers share one fetch. */
  private load(): Promise<void> {
    this.loading ??= this.fetchKeys()
      .then(
        (jwks) => {
          this.local = createLocalJWKSet(jwks);
          this.fetchedAt = Date.now();
        },
        (error: unknown) => {
          this.lastError = error;
        },
      )
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  private async fetchKeys(): Promise<JSONWebKeySet> {
    this.triedAt = Date.now();
    this.fetches++;
    this.uri ??= await this.discover();
    const jwks = (await this.getJson(this.uri)) as Partial<JSONWebKeySet>;
    if (!Array.isArray(jwks?.keys)) throw new Error(`jwt: ${this.uri} is not a JWK Set (no "keys" list)`);
    return jwks as JSONWebKeySet;
  }

  /** The `jwks_uri` of the issuer's discovery document, whose `issuer` must be the one configured. */
  private async discover(): Promise<string> {
    const url = discoveryUrl(this.options.issuer);
    const document = (await this.getJson(url)) as { issuer?: unknown; jwks_uri?: unknown };
    if (document?.issuer !== this.options.issuer) {
      throw new Error(`jwt: ${url} names the issuer ${JSON.stringify(document?.issuer)}, not ${this.options.issuer}`);
    }
    if (typeof document.jwks_uri !== "string") throw new Error(`jwt: ${url} has no jwks_uri`);
    return document.jwks_uri;
  }

  private async getJson(url: string): Promise<unknown> {
    const response = await this.options.fetch(url, {
      signal: AbortSignal.timeout(this.options.timeoutMs),
      headers: { accept: "application/json" },
    });
    if (!response.ok) throw new Error(`jwt: ${url} answered ${response.status}`);
    return response.json();
  }
}
