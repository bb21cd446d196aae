/**
 * jwt(): access tokens checked against a key set served over HTTP here (keys made with jose).
 * Expired, not yet valid, another issuer or audience, `alg: none`, HS256 signed with the public
 * key, a tampered payload and an unknown kid are refused; the key set is fetched once and again
 * for an unknown kid at most once per cool-down, however many such tokens come; while the issuer
 * is down the kept keys work for the grace, and no longer.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { JWK } from "jose";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { JwtOptions } from "../../../lib/entries/auth.ts";
import { jwt } from "../../../lib/entries/auth.ts";
import { createPetStore } from "../../../lib/index.ts";

const AUDIENCE = "https://pets.example";

/** A key pair with its public JWK (kid, alg). */
async function keyPair(kid: string, alg = "RS256") {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg, use: "sig" };
  return { kid, alg, privateKey, jwk };
}
type Pair = Awaited<ReturnType<typeof keyPair>>;

/** An issuer: its discovery document and key set over HTTP, counting the key set's fetches. */
async function startIssuer(keys: Pair[]) {
  const state = { keys, fetches: 0, discoveries: 0 };
  let issuer = "";
  const server: Server = createServer((req, res) => {
    if (req.url === "/.well-known/openid-configuration") {
      state.discoveries++;
      res.setHeader("content-type", "application/json");
      return res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
    }
    if (req.url === "/jwks") {
      state.fetches++;
      res.setHeader("content-type", "application/json");
      return res.end(JSON.stringify({ keys: state.keys.map((k) => k.jwk) }));
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { issuer, state, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

interface Claims {
  iss?: string;
  aud?: string;
  exp?: number;
  nbf?: number;
  sub?: string;
  scope?: string;
  [claim: string]: unknown;
}

async function sign(pair: Pair, claims: Claims, header: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  const body = { sub: "client-1", scope: "pets:read pets:write", iat: now, exp: now + 300, ...claims };
  return new SignJWT(body).setProtectedHeader({ alg: pair.alg, kid: pair.kid, ...header }).sign(pair.privateKey);
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

function storeOf(options: JwtOptions) {
  const verify = jwt(options);
  const store = createPetStore({ auth: { verify, failureLimit: false }, onError: () => {} });
  const get = async (token: string) => {
    const res = await store.handle({ method: "GET", path: "/v1/pets", headers: { authorization: `Bearer ${token}` } });
    return res;
  };
  return { verify, store, get };
}

test("jwt: a valid token is its sub's principal with the scopes of its scope claim; discovery finds the key set", async () => {
  const k1 = await keyPair("k1");
  const issuer = await startIssuer([k1]);
  const { verify } = storeOf({ issuer: issuer.issuer, audience: AUDIENCE });
  assert.equal(await verify(await sign(k1, { iss: issuer.issuer, aud: AUDIENCE })), {
    id: "client-1",
    scopes: ["pets:read", "pets:write"],
  });
  assert.is(issuer.state.discoveries, 1);
  assert.is(issuer.state.fetches, 1);
  await issuer.stop();
});

test("jwt: every bad token is 401 invalid_token: expired, not yet valid, other issuer or audience, none, HS256 with the public key, tampered, unknown kid, no exp", async () => {
  const k1 = await keyPair("k1");
  const stranger = await keyPair("k1"); // same kid, another key: a forged signature
  const issuer = await startIssuer([k1]);
  const iss = issuer.issuer;
  const { get } = storeOf({ issuer: iss, audience: AUDIENCE, cooldownSeconds: 0 });
  const now = Math.floor(Date.now() / 1000);
  const good = await sign(k1, { iss, aud: AUDIENCE });
  assert.is((await get(good)).status, 200);
  const [head, payload, signature] = good.split(".") as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
  const hmacWithPublicKey = await new SignJWT({ iss, aud: AUDIENCE, sub: "x", exp: now + 300 })
    .setProtectedHeader({ alg: "HS256", kid: "k1" })
    .sign(new TextEncoder().encode(JSON.stringify(k1.jwk)));
  const noExp = await new SignJWT({ iss, aud: AUDIENCE, sub: "x" })
    .setProtectedHeader({ alg: "RS256", kid: "k1" })
    .sign(k1.privateKey);
  const bad: Record<string, string> = {
    expired: await sign(k1, { iss, aud: AUDIENCE, exp: now - 120 }), // well past the 30 s tolerance, however slow the run
    "not yet valid": await sign(k1, { iss, aud: AUDIENCE, nbf: now + 120 }),
    "another issuer": await sign(k1, { iss: "http://evil.example", aud: AUDIENCE }),
    "another audience": await sign(k1, { iss, aud: "https://other.example" }),
    "alg none": `${b64({ alg: "none", kid: "k1" })}.${payload}.`,
    "HS256 signed with the public key": hmacWithPublicKey,
    "tampered payload": `${head}.${b64({ ...claims, scope: "pets:write admin" })}.${signature}`,
    "signed by another key": await sign(stranger, { iss, aud: AUDIENCE }),
    "unknown kid": await sign(await keyPair("k9"), { iss, aud: AUDIENCE }),
    "no exp": noExp,
    "not a JWT": "abc.def",
  };
  for (const [what, token] of Object.entries(bad)) {
    const res = await get(token);
    assert.is(res.status, 401, what);
    assert.is(res.headers["www-authenticate"], 'Bearer realm="petstore", error="invalid_token"', what);
  }
  await issuer.stop();
});

test("jwt: exp and nbf within the clock tolerance (30 s) pass; a scope claim may be a list", async () => {
  const k1 = await keyPair("k1", "ES256");
  const issuer = await startIssuer([k1]);
  const iss = issuer.issuer;
  const now = Math.floor(Date.now() / 1000);
  const { verify } = storeOf({ issuer: iss, audience: [AUDIENCE, "other"], scopeClaim: "scp" });
  const late = await verify(await sign(k1, { iss, aud: AUDIENCE, exp: now - 20, nbf: now + 20, scp: ["pets:read"] }));
  assert.equal(late, { id: "client-1", scopes: ["pets:read"] });
  await issuer.stop();
});

test("jwt: a token without the scope is 403 insufficient_scope; a read scope lists", async () => {
  const k1 = await keyPair("k1");
  const issuer = await startIssuer([k1]);
  const iss = issuer.issuer;
  const { store } = storeOf({ issuer: iss, audience: AUDIENCE });
  const token = await sign(k1, { iss, aud: AUDIENCE, scope: "pets:read" });
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  assert.is((await store.handle({ method: "GET", path: "/v1/pets", headers })).status, 200);
  const post = await store.handle({ method: "POST", path: "/v1/pets", headers, body: '{"name":"a","categoryId":1}' });
  assert.is(post.status, 403);
  assert.match(post.headers["www-authenticate"] ?? "", /error="insufficient_scope", scope="pets:write"/);
  await issuer.stop();
});

test("jwt: a new kid is fetched once; 1,000 tokens with unknown kids fetch the key set at most once per cool-down", async () => {
  const k1 = await keyPair("k1");
  const k2 = await keyPair("k2");
  const issuer = await startIssuer([k1]);
  const iss = issuer.issuer;
  const { get } = storeOf({ issuer: iss, audience: AUDIENCE, cooldownSeconds: 1 });
  assert.is((await get(await sign(k1, { iss, aud: AUDIENCE }))).status, 200);
  assert.is(issuer.state.fetches, 1);
  const unknown = await sign(await keyPair("nobody"), { iss, aud: AUDIENCE });
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const answers = await Promise.all(Array.from({ length: 1000 }, () => get(unknown)));
  assert.ok(answers.every((r) => r.status === 401));
  assert.is(issuer.state.fetches, 2, "one fetch for 1,000 unknown kids");
  for (let i = 0; i < 100; i++) await get(unknown);
  assert.is(issuer.state.fetches, 2, "none more within the cool-down");
  // The issuer publishes k2 and signs with it: the first k2 token after the cool-down fetches it.
  issuer.state.keys = [k2, k1];
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const fresh = await sign(k2, { iss, aud: AUDIENCE });
  const both = await Promise.all(Array.from({ length: 50 }, () => get(fresh)));
  assert.ok(
    both.every((r) => r.status === 200),
    "every request with the new key passes",
  );
  assert.is(issuer.state.fetches, 3);
  await issuer.stop();
});

test("jwt: with the issuer stopped the kept keys work for the grace, then tokens cannot be checked (500, reported)", async () => {
  const k1 = await keyPair("k1");
  const issuer = await startIssuer([k1]);
  const iss = issuer.issuer;
  const errors: unknown[] = [];
  const store = createPetStore({
    auth: {
      verify: jwt({ issuer: iss, audience: AUDIENCE, cacheMaxAgeSeconds: 1, graceSeconds: 2, cooldownSeconds: 0 }),
    },
    onError: (error) => errors.push(error),
  });
  const token = await sign(k1, { iss, aud: AUDIENCE });
  const get = () => store.handle({ method: "GET", path: "/v1/pets", headers: { authorization: `Bearer ${token}` } });
  assert.is((await get()).status, 200);
  await issuer.stop();
  const started = Date.now();
  while (Date.now() - started < 2000) {
    assert.is((await get()).status, 200, "within the grace");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.is((await get()).status, 500, "past the grace");
  assert.match(String((errors.at(-1) as Error)?.message), /cannot be fetched/);
});

test("jwt: options are checked: issuer and audience required, only asymmetric algorithms, known names", () => {
  const issuer = "https://id.example/";
  for (const options of [
    {},
    { issuer },
    { issuer: "not a url", audience: "a" },
    { issuer, audience: "" },
    { issuer, audience: "a", algorithms: ["HS256"] },
    { issuer, audience: "a", algorithms: ["none"] },
    { issuer, audience: "a", algorithms: [] },
    { issuer, audience: "a", clockToleranceSeconds: -1 },
    { issuer, audience: "a", jwksUrl: "https://x" },
  ]) {
    assert.throws(() => jwt(options as JwtOptions), TypeError, JSON.stringify(options));
  }
  const verify = jwt({ issuer, audience: "a" });
  assert.is(verify.openIdConfigurationUrl, "https://id.example/.well-known/openid-configuration");
});

test.run();
