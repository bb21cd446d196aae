/**
 * Graceful stop of the standalone server process: SIGTERM/SIGINT stop accepting, let the requests
 * in flight finish, close the storage and exit 0.
 */
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startServer } from "../../server/index.ts";
import { createLogger } from "../../server/logger.ts";
import type { Child } from "../support/server-child.ts";
import { spawnServer, startedUrl } from "../support/server-child.ts";

const KEY = "shutdown-test-key";
const children: Child[] = [];

test.after.each(async () => {
  for (const child of children.splice(0)) await child.stop();
});

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Everything the server sends until it closes the connection (bounded by `ms`). */
function readAll(socket: net.Socket, ms = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`connection still open after ${ms} ms: ${text}`)), ms);
    socket.setEncoding("utf8");
    socket.on("data", (s: string) => {
      text += s;
    });
    socket.on("error", () => {}); // a reset shows as an incomplete answer below
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
}

test("server: on SIGTERM, 50 slow requests in flight are all answered, new connections are refused, exit code 0", async () => {
  const child = spawnServer({ PORT: "0", PETSTORE_API_KEYS: KEY });
  children.push(child);
  const url = await startedUrl(child);
  const port = Number(url.port);
  const body = '{"name":"Slow","categoryId":7}';
  const sockets = await Promise.all(Array.from({ length: 50 }, () => connect(port)));
  const answers = sockets.map((socket) => readAll(socket));
  for (const socket of sockets) {
    socket.write(
      `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${KEY}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
  }
  // A full round trip on a newer connection: the server has read the 50 requests' headers by now.
  assert.is((await fetch(new URL("/healthz", url))).status, 200);

  child.process.kill("SIGTERM");
  await child.line(/shutting down/);
  const refused = await connect(port).then(
    (s) => {
      s.destroy();
      return false;
    },
    (error: NodeJS.ErrnoException) => error.code === "ECONNREFUSED",
  );
  assert.ok(refused, "no new connection is accepted while stopping");

  for (const socket of sockets) socket.end(body.slice(10));
  const texts = await Promise.all(answers);
  const ids = new Set<number>();
  for (const text of texts) {
    assert.match(text, /^HTTP\/1\.1 201 /, text);
    assert.match(text, /\r\nconnection: close\r\n/i, "the connection is closed after the answer");
    const pet = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));
    assert.is(pet.name, "Slow");
    ids.add(pet.id);
  }
  assert.is(ids.size, 50, "50 pets created");
  assert.is(await child.exited(), 0);
  assert.match(child.stdout(), /"msg":"stopped"/);
});

test("server: SIGINT stops an idle server with exit code 0", async () => {
  const child = spawnServer({ PORT: "0", PETSTORE_API_KEYS: KEY });
  children.push(child);
  await startedUrl(child);
  child.process.kill("SIGINT");
  assert.is(await child.exited(), 0);
  assert.is(child.stderr(), "");
});

test("server: a kept-alive idle connection does not hold up the stop", async () => {
  const child = spawnServer({ PORT: "0", PETSTORE_API_KEYS: KEY });
  children.push(child);
  const url = await startedUrl(child);
  const socket = await connect(Number(url.port));
  const closed = readAll(socket);
  socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  await new Promise((resolve) => socket.once("data", resolve));
  child.process.kill("SIGTERM");
  assert.match(await closed, /^HTTP\/1\.1 200 /);
  assert.is(await child.exited(5000), 0, "exits well before the 10 s grace");
});

test("server: once the stop began, /readyz answers 503 while in-flight requests still finish", async () => {
  const server = await startServer(
    { port: 0, host: "127.0.0.1", storage: "memory", basePath: "/v1", logLevel: "silent", apiKeys: [KEY] },
    { logger: createLogger("silent") },
  );
  const [busy, probe] = await Promise.all([connect(server.port), connect(server.port)]);
  const busyText = readAll(busy);
  const probeText = readAll(probe);
  const body = '{"name":"Rex","categoryId":1}';
  busy.write(
    `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
  );
  probe.write("GET /readyz HTTP/1.1\r\nHost: x\r\n"); // the request is under way, not idle
  assert.is((await fetch(new URL("/readyz", server.url))).status, 200, "ready before the stop");
  const closing = server.close();
  probe.write("\r\n");
  const probed = await probeText;
  // docs/SERVER.md: once shutdown began, `503 {"status":"unavailable","reason":"the server is stopping"}`,
  // on a connection the stopping server closes after the answer.
  assert.match(probed, /^HTTP\/1\.1 503 /);
  assert.match(probed, /\r\nconnection: close\r\n/i, probed);
  assert.equal(JSON.parse(probed.slice(probed.indexOf("\r\n\r\n") + 4)), {
    status: "unavailable",
    reason: "the server is stopping",
  });
  busy.end(body.slice(5));
  assert.match(await busyText, /^HTTP\/1\.1 201 /);
  await closing;
});

test("server: every pet answered 201 before a SIGTERM is still there after a restart (sqlite storage)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "petstore-shutdown-"));
  const env = { PORT: "0", PETSTORE_API_KEYS: KEY, PETSTORE_STORAGE: `sqlite:${join(dir, "pets.db")}` };
  try {
    const first = spawnServer(env);
    children.push(first);
    const url = await startedUrl(first);
    const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${url.href}/pets`, { method: "POST", headers, body: `{"name":"Kept ${i}","categoryId":1}` }),
      ),
    );
    first.process.kill("SIGTERM");
    assert.ok(created.every((r) => r.status === 201));
    assert.is(await first.exited(), 0);

    const second = spawnServer(env);
    children.push(second);
    const again = await startedUrl(second);
    const list = await fetch(`${again.href}/pets?limit=100`, { headers });
    const names = ((await list.json()) as { name: string }[]).map((p) => p.name).sort();
    assert.equal(names, Array.from({ length: 20 }, (_, i) => `Kept ${i}`).sort());
  } finally {
    for (const child of children.splice(0)) await child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
