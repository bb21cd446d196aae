/**
 * The conformance module's own parts that let it run in a browser: its assertions (what
 * `node:assert/strict` throws, without Node), and fetch targets that get a case's headers even where
 * the runtime's `Request` drops the ones a page may not set (Origin, Content-Length, …).
 */
import nodeAssert from "node:assert/strict";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createFetchHandler } from "../../adapters/fetch.ts";
import { type AssertionError, assert as check } from "../../conformance/assert.ts";
import type { FetchTarget } from "../../conformance/index.ts";
import { conformanceCases } from "../../conformance/index.ts";
import { createPetStore } from "../../lib/index.ts";
import { CORS_ORIGIN } from "../support/conformance-origin.ts";

/** The error `fn` throws. */
function thrown(fn: () => void): AssertionError {
  try {
    fn();
  } catch (error) {
    return error as AssertionError;
  }
  throw new Error("nothing was thrown");
}

test("conformance assertions: a broken check throws an AssertionError (ERR_ASSERTION, actual, expected, operator), the case's message first, as node:assert/strict does", () => {
  const pairs: [() => void, () => void][] = [
    [() => check.equal(1, 2, "status"), () => nodeAssert.equal(1, 2, "status")],
    [() => check.notEqual(3, 3, "id"), () => nodeAssert.notEqual(3, 3, "id")],
    [() => check.deepEqual([1, 2], [1, 3], "ids"), () => nodeAssert.deepEqual([1, 2], [1, 3], "ids")],
    [() => check.match("x", /y/, "header"), () => nodeAssert.match("x", /y/, "header")],
    [() => check.doesNotMatch("Rex", /Rex/, "body"), () => nodeAssert.doesNotMatch("Rex", /Rex/, "body")],
    [() => check.ok(false, "echo"), () => nodeAssert.ok(false, "echo")],
  ];
  for (const [ours, node] of pairs) {
    const [a, b] = [thrown(ours), thrown(node) as unknown as AssertionError];
    assert.is(a.name, b.name);
    assert.is(a.code, b.code);
    assert.is(a.operator, b.operator);
    assert.equal([a.actual, a.expected], [b.actual, b.expected]);
    assert.ok(a.message.startsWith(b.message.split("\n")[0] as string), `${a.message} | ${b.message}`);
    assert.is(a.generatedMessage, false);
  }
  const generated = thrown(() => check.equal("a", "b"));
  assert.is(generated.message, "'a' !== 'b'");
  assert.is(generated.generatedMessage, true);
});

test("conformance assertions: equal values pass (strict: 1 is not '1'; deepEqual compares plain data by value)", () => {
  check.equal("a", "a");
  check.deepEqual({ a: [1, { b: "c" }] }, { a: [1, { b: "c" }] });
  check.deepEqual({}, {});
  assert.throws(() => check.equal(1, "1"));
  assert.throws(() => check.deepEqual({ a: 1 }, { a: 1, b: undefined }));
  assert.throws(() => check.deepEqual([1], { 0: 1 }));
});

test("conformance: a fetch target gets every header a case sends, Origin and Content-Length included, where the runtime's Request drops them (as a browser's does)", async () => {
  const real = globalThis.Request;
  const forbidden = ["origin", "content-length", "access-control-request-method", "access-control-request-headers"];
  /** A Request that drops what a page may not set, as Chromium's does. */
  class PageRequest extends real {
    constructor(input: string | URL | Request, init: RequestInit = {}) {
      const headers = new Headers(init.headers);
      for (const name of forbidden) headers.delete(name);
      super(input, { ...init, headers });
    }
  }
  const seen = new Set<string>();
  let handler: (request: Request) => Promise<Response> = async () => new Response();
  const target: FetchTarget = {
    basePath: "/v1",
    key: "k",
    cors: { origin: CORS_ORIGIN },
    reset() {
      handler = createFetchHandler(createPetStore({ auth: ["k"], cors: { origins: [CORS_ORIGIN] } }));
    },
    fetch(request) {
      for (const name of forbidden) if (request.headers.has(name)) seen.add(name);
      return handler(request);
    },
  };
  globalThis.Request = PageRequest as typeof Request;
  try {
    for (const c of conformanceCases().filter((c) => c.name.startsWith("cors:") || c.name.includes("413"))) {
      await c.run(target);
    }
  } finally {
    globalThis.Request = real;
  }
  assert.equal([...seen].sort(), [...forbidden].sort());
});

test.run();
