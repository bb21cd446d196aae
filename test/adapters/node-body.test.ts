/**
 * adapters/body.ts over real sockets: a body that came with its headers is taken from the
 * stream's buffer at once (no 'data' listener, no flowing stream); one that trickles in is
 * collected; either way the bytes are exactly the client's.
 */
import type { IncomingMessage } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readBody } from "../../adapters/node-body.ts";

interface Seen {
  body: string;
  listened: boolean;
}

/** A server that reads each body with readBody and records whether it had to listen for 'data'. */
async function withServer(run: (port: number, seen: Seen[]) => Promise<void>): Promise<void> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const entry: Seen = { body: "", listened: false };
    seen.push(entry);
    const on = req.on.bind(req);
    req.on = ((event: string, listener: (...args: unknown[]) => void) => {
      if (event === "data") entry.listened = true;
      return on(event, listener);
    }) as typeof req.on;
    readBody(req, 1024).then(
      (bytes) => {
        entry.body = Buffer.from(bytes).toString("utf8");
        res.end("ok");
      },
      (error: Error) => res.end(error.message),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await run((server.address() as AddressInfo).port, seen);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Sends `parts` on one connection, `gapMs` apart, and waits for the answer. */
function send(port: number, parts: string[], gapMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, gapMs));
        socket.write(part);
      }
    });
    let answer = "";
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString();
      if (answer.endsWith("ok")) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on("error", reject);
  });
}

const BODY = '{"name":"Rex ✓","categoryId":7}';
const HEAD = `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n`;

test("readBody: a body that arrived with its headers is taken from the buffer, without listening", async () => {
  await withServer(async (port, seen) => {
    await send(port, [HEAD + BODY], 0);
    assert.equal(seen, [{ body: BODY, listened: false }]);
  });
});

test("readBody: a body that trickles in (headers, then its bytes in pieces) is collected whole", async () => {
  await withServer(async (port, seen) => {
    const bytes = Buffer.from(BODY);
    const pieces = [HEAD, bytes.subarray(0, 5).toString("latin1"), bytes.subarray(5).toString("latin1")];
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", async () => {
        socket.write(pieces[0] as string);
        await new Promise((r) => setTimeout(r, 30));
        socket.write(bytes.subarray(0, 5));
        await new Promise((r) => setTimeout(r, 30));
        socket.write(bytes.subarray(5));
      });
      socket.on("data", () => {
        socket.destroy();
        resolve();
      });
      socket.on("error", reject);
    });
    assert.is(seen[0]?.body, BODY);
    assert.is(seen[0]?.listened, true);
  });
});

test("readBody: a body larger than the limit is refused even when it is all buffered", async () => {
  await withServer(async (port) => {
    const big = "x".repeat(2000);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${big.length}\r\n\r\n${big}`);
      });
      let text = "";
      socket.on("data", (chunk: Buffer) => {
        text += chunk.toString();
        if (/\r\n\r\n./s.test(text)) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on("error", reject);
    });
    assert.match(answer, /too large|at most/i);
  });
});

test.run();
