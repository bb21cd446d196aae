/**
 * The conformance suite: every case of cases.ts runs on every target of targets.ts, each on a
 * fresh store. Each answer goes through observeResponse and the checks every answer owes the
 * contract; then the answers of all targets must be the same, status, headers and body.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Client } from "./cases.ts";
import { CASES } from "./cases.ts";
import { observeResponse } from "./observe.ts";
import type { Answer, Req, Target } from "./targets.ts";
import { closeTargets, TARGETS, wireHeaders } from "./targets.ts";

/** Headers that belong to the transport, not to the contract: never compared. */
const TRANSPORT = new Set(["date", "connection", "keep-alive", "transfer-encoding"]);
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** What every answer of an operation carries, whatever the case. */
function checkEveryAnswer(req: Req, answer: Answer): void {
  const h = answer.headers;
  assert.is(h["content-type"], "application/json; charset=utf-8", "content-type");
  assert.is(h["cache-control"], "no-store", "cache-control");
  assert.match(h["x-request-id"] ?? "", REQUEST_ID, "x-request-id");
  assert.is(h["x-powered-by"], undefined, "no X-Powered-By");
  assert.is(h.server, undefined, "no Server banner");
  if (req.method === "HEAD") assert.is(answer.body, "", "HEAD has no body");
  else if (h["content-encoding"] === undefined) {
    assert.is(h["content-length"], String(Buffer.byteLength(answer.body)), "content-length");
  }
  if (answer.status >= 400 && req.method !== "HEAD") {
    const body = JSON.parse(answer.body);
    assert.is(body.status, answer.status, "the Error body's status is the HTTP status");
    assert.ok(!/\bat .*:\d+:\d+|node_modules|\/work\//.test(answer.body), "no stack trace or file path");
  }
}

/** The answer with what may differ between targets taken out: transport headers, generated ids. */
function comparable(req: Req, answer: Answer) {
  const headers: Record<string, string> = {};
  for (const name of Object.keys(answer.headers).sort()) {
    const value = answer.headers[name] as string;
    if (TRANSPORT.has(name)) continue;
    // A host that compresses (hapi by default for 1 KiB or more, Deno.serve with compression on,
    // workerd) changes these for clients that accept gzip; the body is compared decoded. The
    // Content-Length of a body is checked against it in checkEveryAnswer; HEAD's is compared.
    if (name === "content-encoding" || (name === "vary" && /^accept-encoding$/i.test(value))) continue;
    if (name === "content-length" && req.method !== "HEAD") continue;
    headers[name] = name === "x-request-id" && value !== wireHeaders(req)["x-request-id"] ? "<generated>" : value;
  }
  return { request: `${req.method} ${req.path}`, status: answer.status, headers, body: answer.body };
}

async function runOn(target: Target, run: (client: Client) => Promise<void>) {
  const session = await target.open();
  const answers: ReturnType<typeof comparable>[] = [];
  let seeded = 0;
  const client: Client = {
    async send(req) {
      const answer = await session.send(req);
      observeResponse(target.name, { method: req.method, path: req.path, headers: wireHeaders(req) }, answer);
      try {
        checkEveryAnswer(req, answer);
      } catch (error) {
        (error as Error).message = `[${target.name}] ${req.method} ${req.path}: ${(error as Error).message}`;
        throw error;
      }
      answers.push(comparable(req, answer));
      return answer;
    },
    async seed(count, status) {
      for (let i = 0; i < count; i++) {
        seeded++;
        await session.seed({ name: `pet-${seeded}`, categoryId: 1, ...(status ? { status } : {}) });
      }
    },
  };
  try {
    await run(client);
  } catch (error) {
    const message = (error as Error).message;
    if (!message.startsWith("[")) (error as Error).message = `[${target.name}] ${message}`;
    throw error;
  } finally {
    await session.close();
  }
  return answers;
}

test.after(closeTargets);

for (const c of CASES) {
  test(c.rule, async () => {
    const results = [];
    for (const target of TARGETS) results.push({ target, answers: await runOn(target, c.run) });
    const [reference, ...others] = results;
    for (const other of others) {
      assert.equal(
        other.answers,
        reference?.answers,
        `${other.target.name} answers differently from ${reference?.target.name}`,
      );
    }
  });
}

test.run();
