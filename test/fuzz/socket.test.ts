/**
 * Socket-level fuzzing: the same hostile requests, written byte for byte on real connections to
 * the standalone server (started in-process on a free port). What Node's HTTP parser refuses
 * before our code runs (a method that is not a token, a malformed Content-Length) may get Node's
 * bare 4xx or a closed connection; everything else must get a contract answer.
 */
import { METHODS } from "node:http";
import fc from "fast-check";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RunningServer } from "../../server/index.ts";
import { startServer } from "../../server/index.ts";
import type { Answer, Ledger, Sent } from "./oracle.ts";
import { checkAnswer, checkRank, checkWalk } from "./oracle.ts";
import type { RawAnswer, RawOutcome } from "./raw-http.ts";
import { rawExchange, requestHead } from "./raw-http.ts";
import type { FuzzCase } from "./requests.ts";
import { bodyBytes, caseArb, FUZZ_KEY, FUZZ_SEED } from "./requests.ts";
import { fuzzFailure, prototypeSnapshot, unhandledRejections } from "./watch.ts";

const MIN_REQUESTS = 500;
const MAX_BODY = 64 * 1024;
/** Node keeps the first of these when a request repeats them; other repeated headers are joined. */
const FIRST_WINS = new Set(["authorization", "content-type", "content-length", "host", "user-agent"]);

/** How a request's body framing came out, which decides how exact the oracle can be. */
type Framing =
  | "exact" // the server reads exactly the body we mean
  | "truncated" // Content-Length smaller than the body: the rest is junk after the request
  | "short" // Content-Length larger than the body, within the limit: we half-close
  | "invalid"; // Node's parser refuses the request

interface Wire {
  parts: (string | Uint8Array)[];
  sent: Sent;
  framing: Framing;
  endAfterWrite: boolean;
  connect: boolean;
}

/** Percent-encodes what cannot appear raw in a request target (keeps "%" so "%zz" stays hostile). */
function encodeTarget(s: string): string {
  let out = "";
  for (const ch of s) {
    if (/^[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]$/.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, "utf8")) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** A header value as the wire can carry it (no control characters), and as Node hands it on. */
function wireValue(value: string): { wire: string; seen: string } {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are what a header line cannot carry.
  const wire = value.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, "");
  const seen = Buffer.from(wire, "utf8")
    .toString("latin1")
    .replace(/^[ \t]+|[ \t]+$/g, "");
  return { wire, seen };
}

function chunked(bytes: Uint8Array): Uint8Array {
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.byteLength; i += 8192) {
    const piece = bytes.subarray(i, i + 8192);
    parts.push(Buffer.from(`${piece.byteLength.toString(16)}\r\n`), Buffer.from(piece), Buffer.from("\r\n"));
  }
  parts.push(Buffer.from("0\r\n\r\n"));
  return Buffer.concat(parts);
}

function toWire(c: FuzzCase): Wire {
  const method = c.method;
  const target = encodeTarget(c.path) + (c.query === null ? "" : `?${encodeTarget(c.query)}`);
  const bytes = bodyBytes(c.body) ?? new Uint8Array(0);
  const lines: [string, string][] = [["host", "127.0.0.1"]];
  const seen = new Map<string, string[]>();
  let declared: string | undefined;
  let te = 0;
  for (const [name, value] of c.headers) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (name === "content-length") {
        declared = one === "true" ? String(bytes.byteLength) : one;
        lines.push([name, declared]);
        seen.set(name, [declared]);
        continue;
      }
      if (name === "transfer-encoding") te++;
      const { wire, seen: value2 } = wireValue(one);
      lines.push([name, wire]);
      seen.set(name, [...(seen.get(name) ?? []), value2]);
    }
  }
  lines.push(["connection", "close"]);
  const view = (name: string) => {
    const values = seen.get(name);
    if (values === undefined) return undefined;
    // The Node adapter reads every Authorization header (rawHeaders): several are refused.
    if (name === "authorization" && values.length > 1) return values;
    return FIRST_WINS.has(name) ? values[0] : values.join(", ");
  };

  let framing: Framing = "exact";
  let endAfterWrite = false;
  let body: Uint8Array | undefined = bytes;
  let payload: Uint8Array = bytes;
  const knownMethod = METHODS.includes(method) && method !== "CONNECT";
  if (!knownMethod || c.path === "")
    framing = "invalid"; // an empty request target is not HTTP
  else if (te > 0) {
    // Content-Length with Transfer-Encoding, or "chunked" twice: request smuggling attempts.
    if (declared !== undefined || te > 1) framing = "invalid";
    payload = chunked(bytes);
  } else if (declared === undefined) {
    body = undefined; // without a length there is no body: do not send one
    payload = new Uint8Array(0);
  } else if (!/^[0-9]+$/.test(declared)) framing = "invalid";
  else {
    const n = Number(declared);
    if (n > MAX_BODY) {
      // Refused before reading (or answered without reading): send only a little.
      payload = bytes.subarray(0, 100);
    } else if (n < bytes.byteLength) {
      framing = "truncated";
      body = bytes.subarray(0, n);
    } else if (n > bytes.byteLength) {
      framing = "short";
      endAfterWrite = true;
    }
  }
  if (body !== undefined && body.byteLength === 0 && te === 0) body = undefined;
  const head = requestHead(method, target, lines);
  const q = target.indexOf("?");
  const sent: Sent = {
    method,
    path: q === -1 ? target : target.slice(0, q),
    query: q === -1 ? "" : target.slice(q + 1),
    authorization: view("authorization"),
    requestId: view("x-request-id"),
    contentType: view("content-type"),
    contentLength: te > 0 ? undefined : declared,
    body,
    bodyIsBytes: true,
    storage: "up",
    maxBodyBytes: MAX_BODY,
    key: FUZZ_KEY,
    exactPost: framing === "exact" || framing === "truncated",
    idempotencyKey: view("idempotency-key"),
  };
  return { parts: [Buffer.from(head, "utf8"), payload], sent, framing, endAfterWrite, connect: method === "CONNECT" };
}

function asAnswer(raw: RawAnswer): Answer {
  return { status: raw.status, headers: raw.headers, body: raw.body.toString("utf8") };
}

/** Node's own refusal of a request its parser could not take: a bare 4xx, no JSON. */
function isNodeRefusal(raw: RawAnswer): boolean {
  return [400, 408, 413, 431].includes(raw.status) && raw.headers["content-type"] === undefined;
}

/** The codes of the Error body a server gives for what Node's parser refuses (contract 1.3). */
const PARSER_CODES = new Set([
  "bad_request",
  "request_timeout",
  "payload_too_large",
  "uri_too_long",
  "headers_too_large",
]);

/**
 * The server's Error answer to what Node's parser refused, with `Connection: close` (its body is
 * empty for a HEAD). Only a request Node may refuse is read this way.
 */
function isParserAnswer(raw: RawAnswer): boolean {
  if (![400, 408, 413, 414, 431].includes(raw.status) || raw.headers.connection !== "close") return false;
  if (raw.body.byteLength === 0) return raw.headers["www-authenticate"] === undefined;
  try {
    return PARSER_CODES.has(JSON.parse(raw.body.toString("utf8")).code);
  } catch {
    return false;
  }
}

function describe(c: FuzzCase, w: Wire, outcome: RawOutcome): string {
  return `${w.framing} request ${JSON.stringify(c).slice(0, 500)}\n  outcome: ${JSON.stringify(outcome).slice(0, 500)}`;
}

function checkOutcome(c: FuzzCase, w: Wire, outcome: RawOutcome, ledger: Ledger, inFlight: ReadonlySet<number>) {
  if (outcome.kind === "timeout") throw new Error(`no answer and no close (a hang): ${describe(c, w, outcome)}`);
  const lenient = w.framing !== "exact" || w.connect;
  if (outcome.kind === "closed") {
    if (!lenient) throw new Error(`connection closed without an answer: ${describe(c, w, outcome)}`);
    return;
  }
  const raw = outcome.answer;
  if (isNodeRefusal(raw) || (lenient && isParserAnswer(raw))) {
    if (!lenient) throw new Error(`Node refused a well-formed request: ${describe(c, w, outcome)}`);
    return;
  }
  if (w.framing === "invalid") throw new Error(`a request Node should refuse got through: ${describe(c, w, outcome)}`);
  const answer = asAnswer(raw);
  if (w.sent.path === "/healthz" || w.sent.path === "/readyz") {
    const ok = ["GET", "HEAD"].includes(w.sent.method) ? answer.status === 200 : answer.status === 405;
    if (!ok) throw new Error(`probe answered ${answer.status}: ${describe(c, w, outcome)}`);
    return;
  }
  checkAnswer(w.sent, answer, ledger, inFlight);
}

test(`fuzz over a socket: >= ${MIN_REQUESTS} hostile requests to the standalone server get a contract answer or Node's refusal, never a hang or crash (FUZZ_SEED=${FUZZ_SEED})`, async () => {
  const server: RunningServer = await startServer({
    port: 0,
    host: "127.0.0.1",
    storage: "memory",
    basePath: "/v1",
    logLevel: "silent",
    apiKeys: [FUZZ_KEY, "another-key-of-a-different-length"],
    // Its bad keys are hostile input to answer, not guesses to slow down (test/lib/auth/throttle.test.ts is that).
    authFailureLimit: false,
  });
  const ledger: Ledger = new Map();
  const before = prototypeSnapshot();
  const rejections = unhandledRejections();
  let requests = 0;
  const outcomes: Record<string, number> = {};
  try {
    const property = fc.asyncProperty(fc.array(caseArb, { minLength: 10, maxLength: 10 }), async (cases) => {
      const wires = cases.map(toWire);
      const results = await Promise.all(
        wires.map((w) =>
          rawExchange(server.port, w.parts, { head: w.sent.method === "HEAD", endAfterWrite: w.endAfterWrite }),
        ),
      );
      // Creations first, so that a concurrent read of a new pet finds it in the ledger.
      const rank = (i: number) => {
        const outcome = results[i] as RawOutcome;
        const w = wires[i] as Wire;
        if (outcome.kind !== "answer") return w.sent.method === "POST" ? 2 : 3;
        return checkRank(w.sent, asAnswer(outcome.answer));
      };
      const order = [...wires.keys()].sort((a, b) => rank(a) - rank(b));
      const known = new Set(ledger.keys());
      let inFlight: Set<number> | undefined;
      for (const i of order) {
        const w = wires[i] as Wire;
        const outcome = results[i] as RawOutcome;
        if (w.sent.method !== "POST" && inFlight === undefined) {
          inFlight = new Set([...ledger.keys()].filter((id) => !known.has(id)));
        }
        requests++;
        const label =
          outcome.kind !== "answer"
            ? outcome.kind
            : `${isNodeRefusal(outcome.answer) ? "node-" : ""}${outcome.answer.status}`;
        outcomes[label] = (outcomes[label] ?? 0) + 1;
        checkOutcome(cases[i] as FuzzCase, w, outcome, ledger, inFlight ?? new Set());
      }
    });
    try {
      await fc.assert(property, { seed: FUZZ_SEED, numRuns: Math.ceil(MIN_REQUESTS / 10) + 5, endOnFailure: true });
    } catch (error) {
      throw fuzzFailure(error, "socket");
    }
    assert.ok(requests >= MIN_REQUESTS, `only ${requests} requests were sent`);
    console.log(`  socket fuzz: ${requests} requests (FUZZ_SEED=${FUZZ_SEED}), outcomes ${JSON.stringify(outcomes)}`);

    const get = async (url: string): Promise<Answer> => {
      const outcome = await rawExchange(server.port, [
        requestHead("GET", url, [
          ["host", "127.0.0.1"],
          ["authorization", `Bearer ${FUZZ_KEY}`],
          ["connection", "close"],
        ]),
      ]);
      if (outcome.kind !== "answer") throw new Error(`walk: ${url}: ${JSON.stringify(outcome)}`);
      return asAnswer(outcome.answer);
    };
    await checkWalk(get, ledger);
    assert.ok(ledger.size > 50, `only ${ledger.size} pets were created: too few to prove much`);
    assert.is((await get("/healthz")).status, 200, "the server is still up");
  } finally {
    rejections.stop();
    await server.close();
  }
  assert.equal(rejections.seen, [], "no unhandled rejection");
  assert.equal(prototypeSnapshot(), before, "no prototype was polluted");
});

test.run();
