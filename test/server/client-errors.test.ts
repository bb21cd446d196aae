/**
 * What Node's HTTP parser refuses before any handler runs gets the contract's Error body from the
 * standalone server and the test server: a malformed request 400, headers too large 431, a request
 * line too long 414, a request too slow 408, each with the headers every answer carries and
 * `Connection: close`. Every test ends by checking that the server still serves.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RunningServer } from "../../server/index.ts";
import type { TestServer } from "../../testing/index.ts";
import { startTestServer } from "../../testing/index.ts";
import type { RawAnswer, RawOutcome } from "../fuzz/raw-http.ts";
import { rawExchange, requestHead } from "../fuzz/raw-http.ts";
import { assertStillServes, startQuietServer } from "../support/quiet-server.ts";

const KEY = "client-errors-key-123456";
let server: RunningServer;
let kit: TestServer;

test.before(async () => {
  server = await startQuietServer(KEY, { headersTimeoutMs: 500, requestTimeoutMs: 1000 });
  kit = await startTestServer();
});
test.after(async () => {
  await server.close();
  await kit.close();
});
test.after.each(async () => {
  await assertStillServes(server.url, KEY);
  await assertStillServes(kit.url, kit.key, "the test server");
});

const portOf = (url: string) => Number(new URL(url).port);

/** The answer, checked to be the contract's Error answer with `status` and `code` that closes the connection. */
function assertRefusal(outcome: RawOutcome, status: number, code: string): RawAnswer {
  if (outcome.kind !== "answer") throw new Error(`expected an answer, got ${JSON.stringify(outcome)}`);
  const { answer } = outcome;
  assert.is(answer.status, status);
  const body = JSON.parse(answer.body.toString());
  assert.is(body.code, code);
  assert.is(body.status, status);
  assert.type(body.message, "string");
  assert.is(answer.headers["content-type"], "application/json; charset=utf-8");
  assert.is(answer.headers["cache-control"], "no-store");
  assert.is(answer.headers["x-content-type-options"], "nosniff");
  assert.is(answer.headers["content-length"], String(answer.body.length));
  assert.is(answer.headers.connection, "close");
  assert.match(answer.headers["x-request-id"] ?? "", /^[A-Za-z0-9._-]{1,128}$/);
  assert.ok(outcome.closedAfter, "the connection is closed after the answer");
  return answer;
}

const SERVERS: [label: string, port: () => number][] = [
  ["standalone server", () => server.port],
  ["test server", () => portOf(kit.url)],
];

for (const [label, port] of SERVERS) {
  test(`client errors (${label}): a NUL in a header value is answered 400 bad_request with the Error body and Connection: close`, async () => {
    const outcome = await rawExchange(port(), ["GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Bad: a\0b\r\n\r\n"], {
      waitForClose: true,
    });
    assertRefusal(outcome, 400, "bad_request");
  });

  test(`client errors (${label}): an invalid method is answered 400 bad_request`, async () => {
    const outcome = await rawExchange(port(), ["G@T /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n"], { waitForClose: true });
    assertRefusal(outcome, 400, "bad_request");
  });

  test(`client errors (${label}): 1 MB of headers is answered 431 headers_too_large`, async () => {
    const headers: [string, string][] = Array.from({ length: 100 }, (_, i) => [`x-h${i}`, "v".repeat(10_000)]);
    const outcome = await rawExchange(port(), [requestHead("GET", "/v1/pets", [["host", "x"], ...headers])], {
      waitForClose: true,
    });
    assertRefusal(outcome, 431, "headers_too_large");
  });

  test(`client errors (${label}): one header of 100 KB is answered 431 headers_too_large, not 414`, async () => {
    const outcome = await rawExchange(port(), [requestHead("GET", "/v1/pets", [["x-big", "v".repeat(100_000)]])], {
      waitForClose: true,
    });
    assertRefusal(outcome, 431, "headers_too_large");
  });

  test(`client errors (${label}): a request line of 100 KB is answered 414 uri_too_long`, async () => {
    const outcome = await rawExchange(port(), [requestHead("GET", `/v1/pets?x=${"a".repeat(100_000)}`, [])], {
      waitForClose: true,
    });
    assertRefusal(outcome, 414, "uri_too_long");
  });

  test(`client errors (${label}): a request line of 20 KB, just past the header limit, is answered 414 uri_too_long`, async () => {
    const outcome = await rawExchange(port(), [requestHead("GET", `/v1/pets/${"9".repeat(20_000)}`, [["host", "x"]])], {
      waitForClose: true,
    });
    assertRefusal(outcome, 414, "uri_too_long");
  });
}

test("client errors (standalone server): headers that never finish are answered 408 request_timeout", async () => {
  const outcome = await rawExchange(server.port, ["GET /v1/pets HTTP/1.1\r\nHost: x\r\n"], {
    waitForClose: true,
    timeoutMs: 5000,
  });
  assertRefusal(outcome, 408, "request_timeout");
});

test("client errors (standalone server): a body that never arrives is answered 408 request_timeout", async () => {
  const head = requestHead("POST", "/v1/pets", [
    ["host", "x"],
    ["authorization", `Bearer ${KEY}`],
    ["content-type", "application/json"],
    ["content-length", "100"],
  ]);
  const outcome = await rawExchange(server.port, [head, '{"name":'], { waitForClose: true, timeoutMs: 5000 });
  assertRefusal(outcome, 408, "request_timeout");
});

test.run();
