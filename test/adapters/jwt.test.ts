/**
 * Access tokens from a real OpenID provider (oidc-provider, client credentials, JWT access tokens)
 * through every adapter, on Bun, Deno and workerd: a token with both scopes lists and creates, a read-only
 * token's create is 403 insufficient_scope naming pets:write, a tampered token is 401
 * invalid_token, no token is 401 without an error attribute. Same answers everywhere.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import Hapi from "@hapi/hapi";
import express from "express";
import Fastify from "fastify";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { petStorePlugin as fastifyPlugin } from "../../adapters/fastify.ts";
import { createFetchHandler } from "../../adapters/fetch.ts";
import { petStorePlugin } from "../../adapters/hapi.ts";
import { createNodeHandler } from "../../adapters/node-http.ts";
import { jwt } from "../../lib/entries/auth.ts";
import { createPetStore } from "../../lib/index.ts";
import { AUDIENCE, signingKey, startProvider } from "../support/oidc-provider.ts";
import { runtimeAvailable, startChild } from "../support/runtimes.ts";
import { bundleWorker, COMPATIBILITY, startWorker } from "../support/worker.ts";

const WORKER = fileURLToPath(new URL("../support/jwt-worker.ts", import.meta.url));
const provider = await startProvider([await signingKey("k1")]);
const writer = await provider.token("pets:read pets:write");
const reader = await provider.token("pets:read");
const tampered = `${writer.slice(0, -4)}${writer.endsWith("AAAA") ? "BBBB" : "AAAA"}`;

const newStore = () => createPetStore({ auth: jwt({ issuer: provider.issuer, audience: AUDIENCE }) });

/** The answers every adapter must give, checked against a server at `origin`. */
async function checkAt(origin: string, name: string): Promise<void> {
  const send = (token: string | undefined, method = "GET") =>
    fetch(`${origin}/v1/pets`, {
      method,
      headers: {
        "content-type": "application/json",
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      ...(method === "POST" ? { body: '{"name":"Rex","categoryId":1}' } : {}),
    });
  assert.is((await send(writer, "POST")).status, 201, `${name}: create`);
  assert.is((await send(reader)).status, 200, `${name}: list`);
  const refused = await send(reader, "POST");
  assert.is(refused.status, 403, `${name}: read-only create`);
  assert.is(
    refused.headers.get("www-authenticate"),
    'Bearer realm="petstore", error="insufficient_scope", scope="pets:write"',
  );
  const list = (await (await send(writer)).json()) as unknown[];
  assert.is(list.length, 1, `${name}: the refused create stored nothing`);
  const bad = await send(tampered);
  assert.is(bad.status, 401, `${name}: tampered`);
  assert.is(bad.headers.get("www-authenticate"), 'Bearer realm="petstore", error="invalid_token"');
  const none = await send(undefined);
  assert.is(none.status, 401, `${name}: no token`);
  assert.is(none.headers.get("www-authenticate"), 'Bearer realm="petstore"');
}

async function listening(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test("jwt: node-http", async () => {
  const server = http.createServer(createNodeHandler(newStore()));
  await checkAt(await listening(server), "node-http");
  server.close();
});

test("jwt: Express", async () => {
  const app = express();
  app.use(createNodeHandler(newStore()));
  const server = http.createServer(app);
  await checkAt(await listening(server), "express");
  server.close();
});

test("jwt: hapi", async () => {
  const server = Hapi.server({ port: 0, host: "127.0.0.1" });
  await server.register({ plugin: petStorePlugin, options: { store: newStore() } });
  await server.start();
  await checkAt(server.info.uri, "hapi");
  await server.stop();
});

test("jwt: Fastify", async () => {
  const app = Fastify();
  await app.register(fastifyPlugin, { store: newStore() });
  await app.listen({ port: 0, host: "127.0.0.1" });
  await checkAt(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, "fastify");
  await app.close();
});

test("jwt: fetch handler served by Node", async () => {
  const handler = createFetchHandler(newStore());
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = new Request(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers: req.headers as Record<string, string>,
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    const response = await handler(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await checkAt(await listening(server), "fetch");
  server.close();
});

const CHILD = fileURLToPath(new URL("../support/fetch-child.ts", import.meta.url));
for (const runtime of ["bun", "deno"] as const) {
  if (!runtimeAvailable(runtime, "access tokens")) continue;
  test(`jwt: fetch handler on ${runtime === "bun" ? "Bun.serve" : "Deno.serve"}`, async () => {
    const child = await startChild(runtime, CHILD, {
      PETSTORE_JWT_ISSUER: provider.issuer,
      PETSTORE_JWT_AUDIENCE: AUDIENCE,
    });
    try {
      await checkAt(`http://127.0.0.1:${child.port}`, runtime);
    } finally {
      await child.stop();
    }
  });
}

test("jwt: workerd (Miniflare), jose on Web Crypto", async () => {
  const { url, mf } = await startWorker(await bundleWorker(WORKER), {
    ...COMPATIBILITY,
    bindings: { ISSUER: provider.issuer, AUDIENCE },
  });
  try {
    await checkAt(url.origin, "workerd");
  } finally {
    await mf.dispose();
  }
});

test.after(() => provider.stop());

test.run();
