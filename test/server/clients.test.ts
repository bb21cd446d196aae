/**
 * The standalone server against difficult clients, over raw sockets: slow headers and slow
 * bodies are cut off, a client vanishing mid-body harms nobody, and an answer sent before the
 * body was read never leaves a kept-alive client with a reset or a hang.
 */
import net from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RunningServer } from "../../server/index.ts";
import { startServer } from "../../server/index.ts";
import { createLogger } from "../../server/logger.ts";

const KEY = "clients-test-key";
let server: RunningServer;

test.before(async () => {
  server = await startServer(
    {
      port: 0,
      host: "127.0.0.1",
      storage: "memory",
      basePath: "/v1",
      logLevel: "silent",
      apiKeys: [KEY],
      headersTimeoutMs: 300,
      requestTimeoutMs: 600,
    },
    { logger: createLogger("silent") },
  );
});

test.after(async () => {
  await server.close();
});

function connect(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Reads one HTTP answer (headers and Content-Length body) from the socket, within `ms`. */
function readAnswer(socket: net.Socket, ms = 5000): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    const done = (error?: Error) => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("close", onClose);
      if (error) reject(error);
    };
    const timer = setTimeout(() => done(new Error(`no full answer within ${ms} ms: ${buffer}`)), ms);
    function onData(chunk: Buffer) {
      buffer += chunk.toString("latin1");
      const end = buffer.indexOf("\r\n\r\n");
      if (end === -1) return;
      const head = buffer.slice(0, end);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length - end - 4 < length) return;
      done();
      resolve({ head, body: buffer.slice(end + 4, end + 4 + length) });
    }
    function onClose() {
      done(new Error(`closed before a full answer: ${buffer}`));
    }
    socket.on("data", onData);
    socket.once("close", onClose);
  });
}

/** Resolves with what the server sent once it closed the connection, within `ms`. */
function untilClosed(socket: net.Socket, ms = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`still open after ${ms} ms: ${text}`)), ms);
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
    });
    socket.on("error", () => {});
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
}

/** Writes `line` every 50 ms until the socket closes (at most `times` times). */
async function dribble(socket: net.Socket, line: string, times: number): Promise<void> {
  for (let i = 0; i < times && !socket.destroyed && !socket.writableEnded; i++) {
    socket.write(line);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const newPet = '{"name":"Rex","categoryId":1}';
const postHead = (length: number, auth = true) =>
  `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth ? `Authorization: Bearer ${KEY}\r\n` : ""}` +
  `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

async function healthy(): Promise<void> {
  const res = await fetch(new URL("/healthz", server.url));
  assert.is(res.status, 200);
  const created = await fetch(`${server.url}/pets`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: newPet,
  });
  assert.is(created.status, 201);
}

test("server: a client sending its headers too slowly is cut off with 408 and a closed connection", async () => {
  const socket = await connect();
  const closed = untilClosed(socket);
  socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  await dribble(socket, "X-Slow: 1\r\n", 100); // 5 s at most; the header time-out is 0.3 s
  assert.match(await closed, /^HTTP\/1\.1 408 /);
  await healthy();
});

test("server: a client sending its body too slowly is cut off by the request time-out", async () => {
  const socket = await connect();
  const closed = untilClosed(socket);
  socket.write(postHead(newPet.length + 200) + newPet);
  await dribble(socket, " ", 100);
  const text = await closed;
  assert.match(text, /^HTTP\/1\.1 408 /);
  await healthy();
});

test("server: a client that disconnects mid-body leaves the server healthy", async () => {
  for (let i = 0; i < 5; i++) {
    const socket = await connect();
    socket.write(`${postHead(1000)}{"name":"Half`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    socket.destroy();
  }
  await healthy();
});

test("server: a 401 to a POST whose small body was not read keeps the kept-alive connection usable", async () => {
  const socket = await connect();
  socket.write(postHead(newPet.length, false) + newPet);
  const first = await readAnswer(socket);
  assert.match(first.head, /^HTTP\/1\.1 401 /);
  assert.not.match(first.head, /\r\nconnection: close/i);
  socket.write(`GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${KEY}\r\n\r\n`);
  const second = await readAnswer(socket);
  assert.match(second.head, /^HTTP\/1\.1 200 /);
  socket.destroy();
});

test("server: a Content-Length over the limit gets 413 at once, without sending the body, and Connection: close", async () => {
  const socket = await connect();
  const closed = untilClosed(socket);
  socket.write(postHead(1_000_000_000));
  const text = await closed;
  assert.match(text, /^HTTP\/1\.1 413 /);
  assert.match(text, /\r\nconnection: close\r\n/i);
  assert.match(text, /"code":"payload_too_large"/);
});

test("server: a chunked body over the limit gets 413 with Connection: close, and the answer arrives whole", async () => {
  const socket = await connect();
  const closed = untilClosed(socket);
  socket.write(
    `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${KEY}\r\n` +
      "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
  );
  const chunk = " ".repeat(16 * 1024);
  for (let i = 0; i < 8 && !socket.destroyed; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
  const text = await closed;
  assert.match(text, /^HTTP\/1\.1 413 /);
  assert.match(text, /\r\nconnection: close\r\n/i);
  assert.ok(text.endsWith('"status":413}'), text);
  await healthy();
});

test("server: a 404 to a GET with a large unannounced-size body closes instead of draining it", async () => {
  const socket = await connect();
  const closed = untilClosed(socket);
  socket.write("GET /v1/nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
  const text = await closed;
  assert.match(text, /^HTTP\/1\.1 404 /);
  assert.match(text, /\r\nconnection: close\r\n/i);
});

test.run();
