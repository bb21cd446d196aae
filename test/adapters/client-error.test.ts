/**
 * `answerClientError`, the one-line `clientError` listener of `petstore-lib/node-http`: the
 * contract's Error answer when nothing of an answer was written yet, a plain close otherwise,
 * and never a throw.
 */
import type { Server } from "node:http";
import { createServer } from "node:http";
import { Duplex } from "node:stream";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { answerClientError, createNodeHandler } from "../../adapters/node-http.ts";
import { createPetStore } from "../../lib/index.ts";
import { listen } from "../../server/listen.ts";
import { rawExchange } from "../fuzz/raw-http.ts";

/** A socket that records what is written to it (or throws on write, when asked). */
function fakeSocket(options: { throwOnWrite?: boolean; headersSent?: boolean } = {}) {
  const written: Buffer[] = [];
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      written.push(chunk);
      callback();
    },
  });
  if (options.throwOnWrite) {
    socket.write = () => {
      throw new Error("EPIPE");
    };
  }
  if (options.headersSent !== undefined) {
    (socket as unknown as { _httpMessage: unknown })._httpMessage = { headersSent: options.headersSent };
  }
  return { socket, written };
}

const parseError = (code: string) => Object.assign(new Error("Parse Error"), { code });

test("answerClientError: on a server embedding createNodeHandler, a malformed request gets 400 bad_request with the Error body", async () => {
  const server: Server = createServer(createNodeHandler(createPetStore({ auth: ["k"] })));
  server.on("clientError", answerClientError);
  const { port } = await listen(server, 0, "127.0.0.1");
  try {
    const outcome = await rawExchange(port, ["GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Bad: a\0b\r\n\r\n"], {
      waitForClose: true,
    });
    if (outcome.kind !== "answer") throw new Error(JSON.stringify(outcome));
    assert.is(outcome.answer.status, 400);
    assert.equal(JSON.parse(outcome.answer.body.toString()), {
      code: "bad_request",
      message: "The HTTP request is malformed.",
      status: 400,
    });
    assert.is(outcome.answer.headers.connection, "close");
    assert.ok(outcome.closedAfter);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test("answerClientError: with no answer started it writes one Error answer and closes the connection", () => {
  const { socket, written } = fakeSocket({ headersSent: false });
  answerClientError(parseError("ERR_HTTP_REQUEST_TIMEOUT"), socket);
  const text = Buffer.concat(written).toString();
  assert.match(text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  assert.match(text, /\r\nconnection: close\r\n/);
  assert.match(text, /"code":"request_timeout"/);
  assert.ok(socket.destroyed);
});

test("answerClientError: once the answer's head was sent it writes nothing and closes the connection", () => {
  const { socket, written } = fakeSocket({ headersSent: true });
  answerClientError(parseError("ERR_HTTP_REQUEST_TIMEOUT"), socket);
  assert.is(written.length, 0);
  assert.ok(socket.destroyed);
});

test("answerClientError: a socket that is no longer writable is closed, nothing written", () => {
  const { socket, written } = fakeSocket();
  socket.end();
  answerClientError(parseError("HPE_INVALID_METHOD"), socket);
  assert.is(written.length, 0);
  assert.ok(socket.destroyed);
});

test("answerClientError: ECONNRESET (the client went away) closes without writing", () => {
  const { socket, written } = fakeSocket();
  answerClientError(parseError("ECONNRESET"), socket);
  assert.is(written.length, 0);
  assert.ok(socket.destroyed);
});

test("answerClientError: never throws, even when the write fails", () => {
  const { socket } = fakeSocket({ throwOnWrite: true });
  answerClientError(parseError("HPE_HEADER_OVERFLOW"), socket);
  assert.ok(socket.destroyed);
});

test("answerClientError: a header overflow inside the request line is 414, after it 431", () => {
  const line = fakeSocket();
  const long = Buffer.from(`GET /${"a".repeat(20_000)}`);
  answerClientError(
    Object.assign(parseError("HPE_HEADER_OVERFLOW"), { rawPacket: long, bytesParsed: long.length }),
    line.socket,
  );
  assert.match(Buffer.concat(line.written).toString(), /^HTTP\/1\.1 414 /);
  const headers = fakeSocket();
  const big = Buffer.from(`GET / HTTP/1.1\r\nX-Big: ${"a".repeat(20_000)}`);
  answerClientError(
    Object.assign(parseError("HPE_HEADER_OVERFLOW"), { rawPacket: big, bytesParsed: big.length }),
    headers.socket,
  );
  assert.match(Buffer.concat(headers.written).toString(), /^HTTP\/1\.1 431 /);
});

test.run();
