/**
 * The conformance suite: every case of the published module (`petstore-lib/conformance`, here
 * conformance/index.ts) runs on every target of targets.ts, each case on a fresh store.
 *
 * Each target is handed to the cases as a `fetch` target that goes through the target's own
 * session (its socket, inject or mock), so that every answer can be recorded: it goes through
 * observeResponse (openapi.json) and the answers of all targets must then be the same, status,
 * headers and body. The targets that listen on a socket also run the published suite as a user
 * would, through their `url`.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ConformanceCase, ConformanceTarget, FetchTarget, SocketTarget } from "../../conformance/index.ts";
import { conformanceCases } from "../../conformance/index.ts";
import { CORS_ORIGIN } from "../support/conformance-origin.ts";
import { observeResponse } from "./observe.ts";
import type { Answer, Req, Session, StoreSetup, Target } from "./targets.ts";
import { baseOf, closeTargets, IN_PROCESS_TARGETS, KEY, READ_KEY, TARGETS } from "./targets.ts";

/** Headers that belong to the transport, not to the contract: never compared. */
const TRANSPORT = new Set(["date", "connection", "keep-alive", "transfer-encoding"]);
const CONTRACT_BASE = "/v1";

type Comparable = { request: string; status: number; headers: Record<string, string>; body: string };

/** The answer with what may differ between targets taken out: transport headers, generated ids, the mount path. */
function comparable(target: Target, req: Req, answer: Answer): Comparable {
  const base = baseOf(target);
  const unmount = (s: string) => (base === CONTRACT_BASE ? s : s.split(base).join(CONTRACT_BASE));
  const headers: Record<string, string> = {};
  // Compression is each host's (the Node adapter's own, hapi's, Deno's): its coding, the coding's
  // tag ("…-br", or a weakened W/"…") and its Vary are taken out, and a coded answer's length is the
  // decoded body's; a 304's length (the 200's, which RFC 9110 §8.6 allows) is the host's to send.
  const coded = answer.headers["content-encoding"] !== undefined;
  const all: Record<string, string> = { ...answer.headers };
  if (coded) all["content-length"] = String(Buffer.byteLength(answer.body));
  for (const name of Object.keys(all).sort()) {
    const value = all[name] as string;
    if (TRANSPORT.has(name) || name === "content-encoding") continue;
    if (name === "content-length" && answer.status === 304) continue;
    if (name === "vary") {
      const kept = value.split(/,\s*/).filter((v) => v.toLowerCase() !== "accept-encoding");
      if (kept.length > 0) headers[name] = kept.join(", ");
      continue;
    }
    if (name === "etag") {
      headers[name] = value.replace(/^W\//, "").replace(/-(?:zstd|br|gzip|deflate)"$/, '"');
      continue;
    }
    if (name === "ratelimit" || name === "retry-after") {
      headers[name] = value.replace(/t=[0-9]+$|^[0-9]+$/, "<seconds left>"); // the clock's, not the target's
      continue;
    }
    headers[name] = name === "x-request-id" && value !== req.headers?.["x-request-id"] ? "<generated>" : unmount(value);
  }
  return { request: `${req.method} ${unmount(req.path)}`, status: answer.status, headers, body: answer.body };
}

/** The request a case built, as the target's session takes it. */
async function toReq(request: Request): Promise<Req> {
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
  return { method: request.method, path: url.pathname + url.search, headers, ...(body ? { body } : {}) };
}

/**
 * The target as the published cases see it: a `fetch` that sends through the target's session and
 * records every answer. `reset()` opens a new session (a fresh store).
 */
function recorded(
  target: Target,
  answers: Comparable[],
  setup: StoreSetup = {},
): FetchTarget & { close(): Promise<void> } {
  let session: Session | undefined;
  const base = baseOf(target);
  return {
    basePath: base,
    key: KEY,
    readOnlyKey: READ_KEY,
    cors: { origin: CORS_ORIGIN },
    rateLimit: setup.rateLimit,
    async reset() {
      await session?.close();
      session = await target.open(setup);
    },
    async fetch(request) {
      if (!session) throw new Error("reset() was not called");
      const req = await toReq(request);
      const answer = await session.send(req);
      const path = base === CONTRACT_BASE ? req.path : req.path.replace(base, CONTRACT_BASE);
      observeResponse(target.name, { method: req.method, path, headers: req.headers ?? {} }, answer);
      answers.push(comparable(target, req, answer));
      const empty = req.method === "HEAD" || answer.status === 204 || answer.status === 304;
      return new Response(empty ? null : answer.body, { status: answer.status, headers: answer.headers });
    },
    async close() {
      await session?.close();
      session = undefined;
    },
  };
}

/** Runs a case on a target; the error names the target. */
async function named<T>(target: Target, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof Error) error.message = `[${target.name}] ${error.message}`;
    throw error;
  }
}

test.after(closeTargets);

/**
 * Runs case `c` on each of `targets` (each store opened with `setup`), checks that every target
 * answered as the first did, and returns the first's answers.
 */
async function runAlike(c: ConformanceCase, targets: readonly Target[], setup: StoreSetup = {}): Promise<Comparable[]> {
  const results: { target: Target; answers: Comparable[] }[] = [];
  for (const target of targets) {
    const answers: Comparable[] = [];
    const wrapped = recorded(target, answers, setup);
    try {
      await named(target, () => c.run(wrapped));
    } finally {
      await wrapped.close();
    }
    results.push({ target, answers });
  }
  const [reference, ...others] = results;
  for (const other of others) {
    // The first answer that differs, alone: a case of a hundred requests would bury it in its diff.
    const expected = reference?.answers ?? [];
    const at = other.answers.findIndex((a, i) => JSON.stringify(a) !== JSON.stringify(expected[i]));
    const differs = `${c.name}: ${other.target.name} answers differently from ${reference?.target.name}`;
    if (at !== -1) assert.equal(other.answers[at], expected[at], `${differs} (answer ${at + 1})`);
    assert.is(other.answers.length, expected.length, `${differs}: as many answers`);
  }
  return reference?.answers ?? [];
}

for (const c of conformanceCases()) {
  test(c.name, async () => {
    await runAlike(
      c,
      TARGETS.filter((t) => !t.hostCannot?.cases.test(c.name)),
    );
  });
}

test("hosts: a case left out for a target's host fails there, for the reason given (so the exception is kept honest)", async () => {
  for (const target of TARGETS.filter((t) => t.hostCannot !== undefined)) {
    const skipped = conformanceCases().filter((c) => target.hostCannot?.cases.test(c.name));
    assert.ok(skipped.length > 0, `${target.name}: its exception names no case`);
    for (const c of skipped) {
      try {
        await runAlike(c, [target]);
      } catch {
        continue;
      }
      assert.unreachable(`${target.name} passes "${c.name}" now: drop the exception (${target.hostCannot?.why})`);
    }
  }
});

test("rate limits: every adapter of a store with a limit passes the rate limit and CORS cases and answers them the same", async () => {
  const setup = { rateLimit: { limit: 20, windowSeconds: 3600 } };
  const cases = conformanceCases().filter((c) => /^(rate limits|cors): /.test(c.name));
  assert.is(cases.length, 4);
  for (const c of cases) {
    const answers = await runAlike(c, IN_PROCESS_TARGETS, setup);
    assert.ok(answers.some((a) => a.status === 429) || !c.name.startsWith("rate"), "the case met the limit");
  }
});

/** A socket target as a user of `petstore-lib/conformance` gives it: a url, read after each reset. */
function overSocket(target: Target): SocketTarget & { close(): Promise<void> } {
  let session: Session | undefined;
  return {
    basePath: baseOf(target),
    key: KEY,
    readOnlyKey: READ_KEY,
    cors: { origin: CORS_ORIGIN },
    async reset() {
      await session?.close();
      session = await target.open();
    },
    get url() {
      if (session?.url === undefined) throw new Error(`${target.name} has no url`);
      return session.url;
    },
    async close() {
      await session?.close();
      session = undefined;
    },
  };
}

for (const target of TARGETS.filter((t) => t.overSocket)) {
  test(`published suite over a socket (url): ${target.name} passes every case`, async () => {
    const socket: ConformanceTarget & { close(): Promise<void> } = overSocket(target);
    try {
      for (const c of conformanceCases()) await named(target, () => c.run(socket));
    } finally {
      await socket.close();
    }
  });
}

test("published suite: a target whose store has no CORS passes the cors cases (no CORS header to any origin)", async () => {
  const { createPetStore } = await import("../../lib/index.ts");
  const { createFetchHandler } = await import("../../adapters/fetch.ts");
  let handler = createFetchHandler(createPetStore({ auth: [KEY] }));
  const plain: FetchTarget = {
    basePath: "/v1",
    key: KEY,
    reset() {
      handler = createFetchHandler(createPetStore({ auth: [KEY] }));
    },
    fetch: (request) => handler(request),
  };
  const cases = conformanceCases().filter((c) => c.name.startsWith("cors: "));
  assert.is(cases.length, 3);
  for (const c of cases) await c.run(plain);
});

test("published suite: a target that breaks a rule makes its case reject, naming the request", async () => {
  const [first] = conformanceCases();
  const broken: FetchTarget = {
    basePath: "/v1",
    key: KEY,
    reset() {},
    fetch: async () => new Response("{}", { status: 200, headers: { "content-type": "text/html" } }),
  };
  try {
    await first?.run(broken);
    assert.unreachable("the case passed on a broken target");
  } catch (error) {
    assert.instance(error, Error);
    assert.match((error as Error).message, /^GET \/v1\/owners: .*content-type/s);
  }
});

test.run();
