/**
 * Two Authorization headers reach the core from every adapter, to be refused with 400
 * invalid_request: Node's `req.headers` keeps only the first, so the Node adapters read
 * `rawHeaders`; Web Headers join them with ", ".
 */

import http from "node:http";
import type { AddressInfo } from "node:net";
import Hapi from "@hapi/hapi";
import Fastify from "fastify";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { petStorePlugin as fastifyPlugin } from "../../adapters/fastify.ts";
import { createFetchHandler } from "../../adapters/fetch.ts";
import { petStorePlugin as hapiPlugin } from "../../adapters/hapi.ts";
import { createNodeHandler, nodeRequest } from "../../adapters/node-http.ts";
import { createPetStore } from "../../lib/index.ts";

const KEY = "repeated-key";
const AUTH = `Bearer ${KEY}`;
const CHALLENGE = 'Bearer realm="petstore", error="invalid_request"';

/** Sends a request with header lines as given (a list sends one line per value). */
function send(port: number, method: string, headers: http.OutgoingHttpHeaders, body?: string) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path: "/v1/pets", headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Two Authorization lines on a GET and on a POST are 400 invalid_request; one line still works. */
async function expectRefused(port: number): Promise<void> {
  for (const [method, body] of [
    ["GET", undefined],
    ["POST", '{"name":"Rex","categoryId":1}'],
  ] as const) {
    // One header line per value (OutgoingHttpHeaders types Authorization as one string).
    const headers: http.OutgoingHttpHeaders = {
      "content-type": "application/json",
      ["authorization" as string]: [AUTH, AUTH],
    };
    const twice = await send(port, method, headers, body);
    assert.is(twice.status, 400, `${method}: ${twice.body}`);
    assert.is(JSON.parse(twice.body).code, "invalid_request");
    assert.is(twice.headers["www-authenticate"], CHALLENGE);
  }
  const once = await send(port, "GET", { authorization: AUTH });
  assert.is(once.status, 200, once.body);
  assert.is(once.body, "[]", "nothing was created");
}

test("node-http: two Authorization headers (which req.headers keeps once) are refused with 400 invalid_request", async () => {
  const server = http.createServer(createNodeHandler(createPetStore({ auth: [KEY] })));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await expectRefused((server.address() as AddressInfo).port);
  } finally {
    server.close();
  }
});

test("hapi: two Authorization headers are refused with 400 invalid_request", async () => {
  const server = Hapi.server({ port: 0, host: "127.0.0.1" });
  await server.register({ plugin: hapiPlugin, options: { store: createPetStore({ auth: [KEY] }) } });
  await server.start();
  try {
    await expectRefused(server.info.port as number);
  } finally {
    await server.stop();
  }
});

test("fastify: two Authorization headers are refused with 400 invalid_request", async () => {
  const app = Fastify();
  await app.register(fastifyPlugin, { store: createPetStore({ auth: [KEY] }) });
  await app.listen({ port: 0, host: "127.0.0.1" });
  try {
    await expectRefused((app.server.address() as AddressInfo).port);
  } finally {
    await app.close();
  }
});

test("fetch: two Authorization headers (joined by Headers with a comma) are refused with 400 invalid_request", async () => {
  const handle = createFetchHandler(createPetStore({ auth: [KEY] }));
  const headers = new Headers();
  headers.append("authorization", AUTH);
  headers.append("authorization", AUTH);
  const res = await handle(new Request("http://pets.test/v1/pets", { headers }));
  assert.is(res.status, 400);
  assert.is(((await res.json()) as { code: string }).code, "invalid_request");
  assert.is(res.headers.get("www-authenticate"), CHALLENGE);
});

test("nodeRequest: with rawHeaders, several Authorization headers reach the core as a list; one, or none given, as they were", () => {
  const headers = { authorization: AUTH, host: "h" };
  const twice = nodeRequest("GET", "/v1/pets", headers, undefined, [
    "Host",
    "h",
    "Authorization",
    "a",
    "authorization",
    "b",
  ]);
  assert.equal(twice.headers, { authorization: ["a", "b"], host: "h" });
  assert.is(nodeRequest("GET", "/v1/pets", headers, undefined, ["Authorization", AUTH, "Host", "h"]).headers, headers);
  assert.is(nodeRequest("GET", "/v1/pets", headers, undefined).headers, headers);
});

test.run();
