/**
 * Request bodies are bounded on every route of the standalone server, with or without a key: the
 * API, /healthz, /readyz, /docs and its assets, {base}/openapi.json and the metrics port read at
 * most the body limit, then answer (413, or an answer that comes first) and close. A client that
 * streams 1 GB is measured: what the server's socket accepted before it closed stays far below.
 */
import { connect } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RunningServer } from "../../server/index.ts";
import type { MetricsServer } from "../../server/metrics.ts";
import { serveMetrics } from "../../server/metrics.ts";
import { answerOf, localHead, openSession, rawExchange } from "../fuzz/raw-http.ts";
import { assertStillServes, startQuietServer } from "../support/quiet-server.ts";

const KEY = "bodies-key-123456";
const LIMIT = 64 * 1024;
/** What a client tries to send. */
const FLOOD = 1024 * 1024 * 1024;
/** What the server may have accepted: the limit plus both sides' socket buffers (some MiB on loopback). */
const BOUND = 32 * 1024 * 1024;

let server: RunningServer;
let metrics: MetricsServer;
let metricsPort: number;

test.before(async () => {
  server = await startQuietServer(KEY);
  metrics = await serveMetrics("127.0.0.1", 0, async () => "up 1\n", "text/plain; version=0.0.4; charset=utf-8");
  metricsPort = Number(new URL(metrics.url).port);
});
test.after(async () => {
  await server.close();
  await metrics.close();
});
test.after.each(() => assertStillServes(server.url, KEY));

interface Flood {
  /** Bytes of body the client's socket took before the server closed the connection. */
  sent: number;
  /** The server's answer, as text. */
  text: string;
  /** False when the client gave up (15 s) before the server closed. */
  closed: boolean;
}

/**
 * Sends `requestHead`, then a body of up to 1 GB (chunked, or as the Content-Length says) for as
 * long as the server takes it, and keeps writing after the answer, until the server closes.
 */
function flood(port: number, requestHead: string, chunked: boolean): Promise<Flood> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    let text = "";
    let sent = 0;
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ sent, text, closed });
    };
    const timer = setTimeout(() => finish(false), 15_000);
    socket.setEncoding("latin1");
    socket.on("data", (s: string) => {
      text += s;
    });
    socket.on("error", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("connect", async () => {
      socket.write(requestHead);
      const size = 64 * 1024;
      const piece = "a".repeat(size);
      const chunk = chunked ? `${size.toString(16)}\r\n${piece}\r\n` : piece;
      while (!done && sent < FLOOD && socket.writable) {
        sent += size;
        if (!socket.write(chunk)) await new Promise((r) => socket.once("drain", r));
      }
      if (sent >= FLOOD) finish(false);
    });
  });
}

/** The status of the answer at the start of `text`, and its header block. */
function statusOf(text: string): { status: number; head: string } {
  const m = /^HTTP\/1\.1 (\d{3}) /.exec(text);
  assert.ok(m, `an answer came: ${JSON.stringify(text.slice(0, 80))}`);
  return { status: Number(m?.[1]), head: text.slice(0, text.indexOf("\r\n\r\n")).toLowerCase() };
}

function assertBounded(result: Flood, label: string): void {
  assert.ok(result.closed, `${label}: the server closed the connection`);
  assert.ok(result.sent < BOUND, `${label}: the server took ${result.sent} bytes before closing`);
  assert.match(
    statusOf(result.text).head,
    /\r\nconnection: close(\r\n|$)/,
    `${label}: the answer says Connection: close`,
  );
}

// The server's own routes, and the core's routes that answer without reading a body, without a key.
const STREAMED: [label: string, port: () => number, method: string, target: string, statuses: number[]][] = [
  ["GET /healthz", () => server.port, "GET", "/healthz", [413]],
  ["GET /readyz", () => server.port, "GET", "/readyz", [413]],
  ["GET /docs", () => server.port, "GET", "/docs", [413]],
  ["GET /docs/swagger-ui.css", () => server.port, "GET", "/docs/swagger-ui.css", [413]],
  ["HEAD /healthz", () => server.port, "HEAD", "/healthz", [413]],
  ["POST /healthz", () => server.port, "POST", "/healthz", [405]],
  ["GET /v1/openapi.json", () => server.port, "GET", "/v1/openapi.json", [200]],
  ["POST /v1/pets without a key", () => server.port, "POST", "/v1/pets", [401]],
  ["PUT /v1/pets without a key", () => server.port, "PUT", "/v1/pets", [405]],
  ["POST /v1/nowhere", () => server.port, "POST", "/v1/nowhere", [404]],
  ["POST /nowhere (outside the base path)", () => server.port, "POST", "/nowhere", [404]],
  ["GET /metrics", () => metricsPort, "GET", "/metrics", [413]],
  ["POST /metrics", () => metricsPort, "POST", "/metrics", [405]],
  ["GET /elsewhere on the metrics port", () => metricsPort, "GET", "/elsewhere", [404]],
];

for (const [label, port, method, target, statuses] of STREAMED) {
  test(`bodies: ${label} with a chunked 1 GB body reads at most the limit, then answers ${statuses.join(" or ")} with Connection: close`, async () => {
    const result = await flood(port(), localHead(method, target, [["transfer-encoding", "chunked"]]), true);
    assertBounded(result, label);
    assert.ok(statuses.includes(statusOf(result.text).status), `${label}: ${result.text.slice(0, 40)}`);
  });

  test(`bodies: ${label} with a Content-Length of 1 GB is answered ${statuses.join(" or ")} unread and the connection closed`, async () => {
    const result = await flood(port(), localHead(method, target, [["content-length", String(FLOOD)]]), false);
    assertBounded(result, label);
    assert.ok(statuses.includes(statusOf(result.text).status), `${label}: ${result.text.slice(0, 40)}`);
  });
}

test("bodies: GET /healthz with a Content-Length of 8 GB is refused 413 payload_too_large naming the limit, before the body arrives", async () => {
  const outcome = await rawExchange(
    server.port,
    [localHead("GET", "/healthz", [["content-length", "8589934592"]]), "abc"],
    {
      waitForClose: true,
    },
  );
  const answer = answerOf(outcome);
  assert.is(answer.status, 413);
  assert.equal(JSON.parse(answer.body.toString()), {
    code: "payload_too_large",
    message: `The request body must be at most ${LIMIT} bytes.`,
    status: 413,
  });
  assert.is(answer.headers["content-type"], "application/json; charset=utf-8");
  assert.is(answer.headers.connection, "close");
  assert.is(answer.headers["x-content-type-options"], "nosniff");
  assert.ok(outcome.kind === "answer" && outcome.closedAfter, "the server closed the connection");
});

test("bodies: GET /metrics with a Content-Length over the limit is refused 413 payload_too_large", async () => {
  const outcome = await rawExchange(metricsPort, [
    localHead("GET", "/metrics", [["content-length", String(LIMIT + 1)]]),
  ]);
  const answer = answerOf(outcome);
  assert.is(answer.status, 413);
  assert.is(JSON.parse(answer.body.toString()).code, "payload_too_large");
  assert.is(answer.headers.connection, "close");
});

// The core's own route answers before reading: it may close instead of draining a body of unknown length.
const DRAINED: [label: string, port: () => number, target: string, core: boolean][] = [
  ["/healthz", () => server.port, "/healthz", false],
  ["/readyz", () => server.port, "/readyz", false],
  ["/docs", () => server.port, "/docs", false],
  ["/docs/init.js", () => server.port, "/docs/init.js", false],
  ["/v1/openapi.json", () => server.port, "/v1/openapi.json", true],
  ["/metrics", () => metricsPort, "/metrics", false],
];

for (const [label, port, target, core] of DRAINED) {
  for (const chunked of [false, true]) {
    test(`bodies: a ${chunked ? "chunked " : ""}body within the limit on GET ${label} is drained: the kept-alive connection serves the next request${core && chunked ? " (or was closed with Connection: close)" : ""}`, async () => {
      const session = await openSession(port());
      try {
        const body = "b".repeat(LIMIT - 10);
        const framed = chunked ? `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n` : body;
        const framing: [string, string] = chunked
          ? ["transfer-encoding", "chunked"]
          : ["content-length", String(body.length)];
        const first = await session.exchange(localHead("GET", target, [framing]) + framed);
        assert.is(answerOf(first).status, 200);
        const second = await session.exchange(localHead("GET", target));
        if (core && chunked && answerOf(first).headers.connection === "close") {
          assert.is(second.kind, "closed", "a connection announced as closing is closed"); // the core's choice
        } else {
          assert.is(answerOf(first).headers.connection, "keep-alive");
          assert.is(answerOf(second).status, 200, "the next request on the same connection is served");
        }
      } finally {
        session.close();
      }
    });
  }
}

test("bodies: a chunked body past the limit on GET /readyz is refused 413 payload_too_large once the limit is passed", async () => {
  const body = "c".repeat(LIMIT + 1);
  const outcome = await rawExchange(
    server.port,
    [localHead("GET", "/readyz", [["transfer-encoding", "chunked"]]), `${body.length.toString(16)}\r\n${body}\r\n`],
    { waitForClose: true },
  );
  assert.is(answerOf(outcome).status, 413);
  assert.is(JSON.parse(answerOf(outcome).body.toString()).code, "payload_too_large");
  assert.is(answerOf(outcome).headers.connection, "close");
});

test.run();
