/**
 * A real OpenID provider for the tests of access tokens: `oidc-provider` (npm) on 127.0.0.1, the
 * client credentials grant, JWT access tokens (RFC 9068) for the audience AUDIENCE with the scopes
 * asked for. `restart(keys)` serves another key set on the same port (a rotation at the provider);
 * `jwksFetches` counts the key set's fetches; `stop()` takes it away (an outage).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { JWK } from "jose";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

export const AUDIENCE = "https://pets.example";
export const CLIENT = { id: "shop", secret: "shop-secret-0123456789" };

/** A signing key of the provider (private JWK with its kid). */
export async function signingKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" };
}

/** The provider's storage: a Map of its own (its built-in one warns on every start). */
class MapAdapter {
  private readonly records = new Map<string, unknown>();
  constructor(readonly name: string) {}
  async upsert(id: string, payload: unknown) {
    this.records.set(id, payload);
  }
  async find(id: string) {
    return this.records.get(id);
  }
  async findByUid() {
    return undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume() {}
  async destroy(id: string) {
    this.records.delete(id);
  }
  async revokeByGrantId() {}
}

function providerOf(issuer: string, keys: JWK[]) {
  const provider = new Provider(issuer, {
    adapter: MapAdapter as never,
    ttl: { ClientCredentials: 300 },
    clients: [
      {
        client_id: CLIENT.id,
        client_secret: CLIENT.secret,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        scope: "pets:read pets:write",
      },
    ],
    scopes: ["pets:read", "pets:write"],
    jwks: { keys: keys as never },
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: "pets:read pets:write",
          audience: AUDIENCE,
          accessTokenTTL: 300,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        }),
      },
    },
  });
  return provider;
}

export interface RunningProvider {
  issuer: string;
  /** A new access token with these scopes (space-separated). */
  token(scope: string): Promise<string>;
  /** Fetches of the key set since the start. */
  readonly jwksFetches: number;
  /** Serves these keys from now on (the first signs). */
  restart(keys: JWK[]): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the provider with `keys` (the first signs). */
export async function startProvider(keys: JWK[]): Promise<RunningProvider> {
  let listener: (req: never, res: never) => void = () => {};
  let fetches = 0;
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith("/jwks")) fetches++;
    listener(req as never, res as never);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  listener = providerOf(issuer, keys).callback() as never;
  let stopped = false;
  return {
    issuer,
    get jwksFetches() {
      return fetches;
    },
    async token(scope) {
      const response = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ grant_type: "client_credentials", scope, resource: AUDIENCE }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string };
      if (body.access_token === undefined) throw new Error(`no token: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async restart(next) {
      listener = providerOf(issuer, next).callback() as never;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
