/**
 * Access tokens from a real OpenID provider (oidc-provider, the client credentials grant, JWT
 * access tokens) to the standalone server, which finds the provider's keys through its discovery
 * document: valid tokens pass with their scopes; every kind of bad token is refused with RFC
 * 6750's header; 1,000 unknown kids fetch the key set at most once per cool-down; a key rotation at
 * the provider under steady traffic fails no request; with the provider stopped the kept keys work
 * for the grace. Log lines name the principal, never the token.
 */
import { Writable } from "node:stream";
import type { JWK } from "jose";
import { importJWK, SignJWT } from "jose";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ServerConfig } from "../../server/index.ts";
import { startServer } from "../../server/index.ts";
import { createLogger } from "../../server/logger.ts";
import { AUDIENCE, signingKey, startProvider } from "../support/oidc-provider.ts";

/** The standalone server taking the provider's tokens, its log lines kept. */
async function serve(jwt: ServerConfig["jwt"], more: Partial<ServerConfig> = {}) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(
        ...String(chunk)
          .split("\n")
          .filter((l) => l !== ""),
      );
      done();
    },
  });
  const server = await startServer({ apiKeys: [], port: 0, jwt, authFailureLimit: false, ...more } as ServerConfig, {
    logger: createLogger("info", sink),
  });
  const send = async (token: string | undefined, method = "GET", body?: string) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const res = await fetch(`${server.url}/pets`, { method, headers, ...(body === undefined ? {} : { body }) });
    return { status: res.status, challenge: res.headers.get("www-authenticate"), body: await res.text() };
  };
  return { server, send, lines };
}

async function forge(key: JWK, claims: Record<string, unknown>, header: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  const body = { sub: "shop", client_id: "shop", scope: "pets:read pets:write", iat: now, exp: now + 300, ...claims };
  return new SignJWT(body)
    .setProtectedHeader({ alg: "RS256", kid: key.kid as string, typ: "at+jwt", ...header })
    .sign(await importJWK(key, "RS256"));
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
const INVALID = 'Bearer realm="petstore", error="invalid_token"';

test("oidc: the server finds the provider's keys by discovery; tokens pass with their scopes, refusals carry RFC 6750's headers", async () => {
  const k1 = await signingKey("k1");
  const provider = await startProvider([k1]);
  const { server, send, lines } = await serve({ issuer: provider.issuer, audience: AUDIENCE });
  try {
    const writer = await provider.token("pets:read pets:write");
    const reader = await provider.token("pets:read");
    assert.is((await send(writer, "POST", '{"name":"Rex","categoryId":1}')).status, 201);
    assert.is((await send(reader)).status, 200);
    const refused = await send(reader, "POST", '{"name":"Tom","categoryId":1}');
    assert.is(refused.status, 403);
    assert.is(refused.challenge, 'Bearer realm="petstore", error="insufficient_scope", scope="pets:write"');
    assert.is(JSON.parse(refused.body).code, "insufficient_scope");
    assert.is((await server.store.listPets()).pets.length, 1, "the read-only create stored nothing");
    const missing = await send(undefined);
    assert.is(missing.status, 401);
    assert.is(missing.challenge, 'Bearer realm="petstore"');

    const iss = provider.issuer;
    const now = Math.floor(Date.now() / 1000);
    const [head, payload, signature] = writer.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    const publicJwk = { kty: k1.kty, n: k1.n, e: k1.e, kid: "k1" };
    const bad: Record<string, string> = {
      expired: await forge(k1, { iss, aud: AUDIENCE, exp: now - 60 }),
      "not yet valid": await forge(k1, { iss, aud: AUDIENCE, nbf: now + 60 }),
      "wrong issuer": await forge(k1, { iss: "http://127.0.0.1:1", aud: AUDIENCE }),
      "wrong audience": await forge(k1, { iss, aud: "https://other.example" }),
      "alg none": `${b64({ alg: "none", typ: "at+jwt" })}.${payload}.`,
      "HS256 signed with the public key": await new SignJWT({ ...claims })
        .setProtectedHeader({ alg: "HS256", kid: "k1" })
        .sign(new TextEncoder().encode(JSON.stringify(publicJwk))),
      "tampered payload": `${head}.${b64({ ...claims, sub: "admin" })}.${signature}`,
      "unknown kid": await forge(await signingKey("k-unknown"), { iss, aud: AUDIENCE }),
    };
    for (const [what, token] of Object.entries(bad)) {
      const res = await send(token);
      assert.is(res.status, 401, what);
      assert.is(res.challenge, INVALID, what);
      assert.is(JSON.parse(res.body).code, "unauthorized", what);
    }
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
    assert.equal(
      requests.slice(0, 3).map((l) => l.principal),
      ["shop", "shop", "shop"],
      "each line names the principal",
    );
    const text = lines.join("\n");
    for (const token of [writer, reader, ...Object.values(bad)]) {
      assert.not.ok(text.includes(token.split(".")[2] || token.split(".")[1] || token), "no token in any line");
    }
  } finally {
    await server.close();
    await provider.stop();
  }
});

test("oidc: 1,000 requests with unknown kids fetch the key set at most once per cool-down", async () => {
  const provider = await startProvider([await signingKey("k1")]);
  const { server, send } = await serve({ issuer: provider.issuer, audience: AUDIENCE });
  try {
    assert.is((await send(await provider.token("pets:read"))).status, 200);
    const before = provider.jwksFetches;
    const unknown = await forge(await signingKey("k-unknown"), { iss: provider.issuer, aud: AUDIENCE });
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(Array.from({ length: 100 }, () => send(unknown)));
      assert.ok(answers.every((a) => a.status === 401 && a.challenge === INVALID));
    }
    assert.ok(provider.jwksFetches - before <= 1, `${provider.jwksFetches - before} fetches within one cool-down`);
  } finally {
    await server.close();
    await provider.stop();
  }
});

test("oidc: a key rotation at the provider under steady traffic fails no request with a valid token", async () => {
  const k1 = await signingKey("k1");
  const k2 = await signingKey("k2");
  const provider = await startProvider([k1]);
  const { server, send } = await serve({ issuer: provider.issuer, audience: AUDIENCE, cooldownSeconds: 1 });
  let token = await provider.token("pets:read");
  let running = true;
  const statuses: number[] = [];
  // Four clients send with the newest token they have; one refreshes it every 100 ms.
  const clients = Array.from({ length: 4 }, async () => {
    while (running) statuses.push((await send(token)).status);
  });
  const refresher = (async () => {
    while (running) {
      token = await provider.token("pets:read");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  try {
    await pause(1500);
    await provider.restart([k2, k1]); // the new key published and signing; the old one still published
    await pause(2000);
    await provider.restart([k2]); // the old key removed once its tokens are no longer used
    await pause(1500);
  } finally {
    running = false;
    await Promise.all([...clients, refresher]);
    await server.close();
    await provider.stop();
  }
  assert.ok(statuses.length > 100, `${statuses.length} requests`);
  const failed = statuses.filter((s) => s !== 200);
  assert.equal(failed, [], `${failed.length} of ${statuses.length} failed`);
});

test("oidc: with the provider stopped the kept keys work for the grace, and not past it", async () => {
  const provider = await startProvider([await signingKey("k1")]);
  const { server, send } = await serve({
    issuer: provider.issuer,
    audience: AUDIENCE,
    cacheMaxAgeSeconds: 1,
    graceSeconds: 2,
  });
  try {
    const token = await provider.token("pets:read");
    assert.is((await send(token)).status, 200);
    await provider.stop();
    const started = Date.now();
    while (Date.now() - started < 2500) {
      assert.is((await send(token)).status, 200, `${Date.now() - started} ms into the outage`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.is((await send(token)).status, 500, "past the grace the token cannot be checked");
  } finally {
    await server.close();
  }
});

test.run();
