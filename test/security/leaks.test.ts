/**
 * No stack trace, file path or dependency message ever reaches a response: storages that fail
 * in every way a driver can (Errors with stacks and driver messages, non-Error throws, invalid
 * stored values), verify functions that throw, and bodies that make JSON.parse complain, are
 * all answered with the contract's generic messages, through handle() and over a socket.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createNodeHandler } from "../../adapters/node-http.ts";
import type { PetStorage } from "../../lib/entries/storage.ts";
import type { PetStoreResponse } from "../../lib/index.ts";
import { createPetStore, ERRORS } from "../../lib/index.ts";

const KEY = "leak-test-key-1234";
const AUTH = { authorization: `Bearer ${KEY}` };
/** Fragments of what drivers, the runtime and stack traces say; none may reach a client. */
const FORBIDDEN = [
  /\n\s+at /,
  /\bat [\w.<>]+ \(/,
  /node:internal/,
  /node_modules/,
  /\/srv\//,
  /\.(ts|js|mjs|cjs):\d+/,
  /SECRET/,
  /ECONNREFUSED|ETIMEDOUT|EPIPE/,
  /SQLITE_/,
  /ReplyError|ERR wrong|WRONGTYPE/,
  /relation ".*" does not exist/,
  /Unexpected token|Unexpected end of JSON|JSON at position|", .*is not valid JSON/,
  /TypeError|ReferenceError|RangeError|SyntaxError/,
  /Cannot read properties/,
  /Maximum call stack/,
  /password/i,
];

function driverError(message: string): Error {
  const error = new Error(`${message} SECRET /srv/app/node_modules/driver/index.js:12:5`);
  error.stack = `Error: ${message}\n    at Socket.<anonymous> (/srv/app/node_modules/driver/index.js:12:5)\n    at node:internal/streams:1:1`;
  return error;
}

/** Things a storage might throw or hand back instead of a pet. */
const FAILURES: [string, () => unknown][] = [
  ["an Error with a driver message and a stack", () => driverError("connect ECONNREFUSED 10.0.0.5:6379")],
  [
    "a SQLite error",
    () =>
      Object.assign(driverError("SQLITE_READONLY: attempt to write a readonly database"), { code: "SQLITE_READONLY" }),
  ],
  ["a Postgres error", () => Object.assign(driverError('relation "pets" does not exist'), { code: "42P01" })],
  [
    "a Redis reply error",
    () => Object.assign(driverError("WRONGTYPE Operation against a key"), { name: "ReplyError" }),
  ],
  ["a TypeError", () => new TypeError("Cannot read properties of undefined (reading 'id') SECRET")],
  ["a RangeError", () => new RangeError("Maximum call stack size exceeded SECRET")],
  ["a string", () => "SECRET password=hunter2 at /srv/db.js:1:1"],
  ["null", () => null],
  ["an object with toString and toJSON", () => ({ toString: () => "SECRET", toJSON: () => ({ stack: "SECRET" }) })],
];

function failing(thrown: () => unknown): PetStorage {
  const fail = () => Promise.reject(thrown());
  return { kind: "failing", create: fail, get: fail, list: fail, ping: fail, close: async () => {} };
}

/** A storage that answers, but with values that are not pets. */
const CORRUPT: [string, unknown][] = [
  ["a string", "SECRET"],
  [
    "an invalid pet (categoryId a string, status unknown)",
    { id: 1, name: "x\n    at /srv/db.js:1:1", categoryId: "SECRET", status: "gone" },
  ],
  [
    "an object whose getters throw",
    Object.defineProperty({}, "id", {
      get: () => {
        throw driverError("SECRET getter");
      },
    }),
  ],
];

function corrupt(value: unknown): PetStorage {
  return {
    kind: "corrupt",
    create: async () => value as never,
    get: async () => value as never,
    list: async () => [value] as never,
    ping: async () => {},
    close: async () => {},
  };
}

const REQUESTS = [
  { method: "GET", path: "/v1/pets", headers: AUTH },
  { method: "GET", path: "/v1/pets/1", headers: AUTH },
  { method: "HEAD", path: "/v1/pets", headers: AUTH },
  {
    method: "POST",
    path: "/v1/pets",
    headers: { ...AUTH, "content-type": "application/json" },
    body: '{"name":"Rex","categoryId":1}',
  },
];

function assertClean(res: PetStoreResponse, what: string) {
  for (const pattern of FORBIDDEN) {
    assert.not.match(res.body, pattern, `${what}: body matches ${pattern}: ${res.body}`);
    for (const [name, value] of Object.entries(res.headers)) {
      assert.not.match(value, pattern, `${what}: header ${name} matches ${pattern}`);
    }
  }
  if (res.body !== "") {
    try {
      JSON.parse(res.body);
    } catch {
      assert.unreachable(`${what}: answered ${res.status} with a body that is not JSON: ${res.body.slice(0, 200)}`);
    }
  }
  if (res.status >= 400 && res.body !== "") {
    const body = JSON.parse(res.body);
    const table = ERRORS[body.code as keyof typeof ERRORS];
    assert.ok(table !== undefined, `${what}: code ${body.code} is from the table`);
    if (res.status >= 500) assert.is(body.message, table.message, `${what}: a 5xx says only the table's message`);
  }
}

// Whatever a storage throws but an invalid record is an outage (lib/storage/failures.ts): 503.
for (const [label, thrown] of FAILURES) {
  const status = 503;
  test(`leaks: a storage throwing ${label} gives ${status} with the generic message and nothing of the error`, async () => {
    const logged: unknown[] = [];
    const store = createPetStore({ storage: failing(thrown), auth: [KEY], onError: (e) => logged.push(e) });
    for (const request of REQUESTS) {
      const res = await store.handle(request);
      assert.is(res.status, status, `${request.method} ${request.path}`);
      assertClean(res, `${label}, ${request.method} ${request.path}`);
    }
  });
}

for (const [label, value] of CORRUPT) {
  test(`leaks: a storage handing back ${label} instead of a Pet gives 500 internal_error, never the value nor broken JSON`, async () => {
    const reported: unknown[] = [];
    const store = createPetStore({ storage: corrupt(value), auth: [KEY], onError: (e) => reported.push(e) });
    for (const request of REQUESTS) {
      const res = await store.handle(request);
      assertClean(res, `${label}, ${request.method} ${request.path}`);
      assert.is(res.status, 500, `${request.method} ${request.path}: ${res.status} ${res.body}`);
    }
    assert.ok(reported.length >= REQUESTS.length, "each invalid value was reported to onError");
  });
}

test("leaks: a verify function that throws or rejects gives 500 internal_error with the generic message, never its own", async () => {
  for (const verify of [
    () => {
      throw driverError("LDAP lookup failed for SECRET");
    },
    () => Promise.reject(driverError("token service ETIMEDOUT SECRET")),
  ]) {
    const store = createPetStore({ auth: verify, onError: () => {} });
    const res = await store.handle({ method: "GET", path: "/v1/pets", headers: AUTH });
    assert.is(res.status, 500);
    assertClean(res, "throwing verify");
  }
});

test("leaks: an onError hook that throws does not turn into a leak or a rejection", async () => {
  const store = createPetStore({
    auth: () => {
      throw driverError("token service down SECRET");
    },
    onError: () => {
      throw driverError("logger down SECRET");
    },
  });
  const res = await store.handle({ method: "GET", path: "/v1/pets/1", headers: AUTH });
  assert.is(res.status, 500);
  assertClean(res, "throwing onError");
});

test("leaks: bodies that make JSON.parse, UTF-8 decoding or validation complain are answered in the contract's words only", async () => {
  const store = createPetStore({ auth: [KEY], onError: () => {} });
  const bodies: (string | Uint8Array)[] = [
    "{",
    '{"name": undefined}',
    "[1,]",
    '{"name":"a","categoryId":1}}',
    "\u0000",
    Uint8Array.from([0xff, 0xfe, 0x7b]),
    `${"[".repeat(100_000)}`,
    '{"name":"a","categoryId":{"toString":1}}',
    '{"name":"a","categoryId":1,"__proto__":{"stack":"SECRET"}}',
  ];
  for (const body of bodies) {
    const res = await store.handle({
      method: "POST",
      path: "/v1/pets",
      headers: { ...AUTH, "content-type": "application/json" },
      body,
    });
    assert.ok([400, 413].includes(res.status), `status ${res.status}`);
    assertClean(res, `body ${String(body).slice(0, 20)}`);
  }
});

test("leaks: over a socket (Node adapter), a failing storage's answer carries no stack, path or driver message", async () => {
  const store = createPetStore({
    storage: failing(() => driverError("connect ECONNREFUSED 10.0.0.5:5432")),
    auth: [KEY],
    onError: () => {},
  });
  const server = createServer(createNodeHandler(store));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    for (const request of REQUESTS) {
      const res = await fetch(`http://127.0.0.1:${port}${request.path}`, {
        method: request.method,
        headers: request.headers,
        ...(request.body === undefined ? {} : { body: request.body }),
      });
      const headers: Record<string, string> = {};
      res.headers.forEach((value, name) => {
        headers[name] = value;
      });
      const answer = { status: res.status, headers, body: await res.text() };
      assert.is(answer.status, 503);
      assertClean(answer, `socket ${request.method} ${request.path}`);
      assert.is(headers["x-powered-by"], undefined);
    }
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test.run();
