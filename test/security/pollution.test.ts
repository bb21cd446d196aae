/**
 * No prototype pollution through any input: `__proto__`, `constructor` and `prototype` in
 * bodies (top level and nested), query strings, header names and values, request ids and paths,
 * through handle() and over a socket to the standalone server; afterwards the built-in
 * prototypes have exactly the properties they had before, and each input got a contract answer.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createPetStore } from "../../lib/index.ts";
import { startServer } from "../../server/index.ts";
import { rawExchange, requestHead } from "../fuzz/raw-http.ts";
import { prototypeSnapshot } from "../fuzz/watch.ts";

const KEY = "pollution-key-123456";
const BODIES = [
  '{"__proto__":{"polluted":"yes"},"name":"a","categoryId":1}',
  '{"name":"a","categoryId":1,"__proto__":{"polluted":"yes","toString":"x"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}},"name":"a","categoryId":1}',
  '{"prototype":{"polluted":"yes"},"name":"a","categoryId":1}',
  '{"name":{"__proto__":{"polluted":"yes"}},"categoryId":1}',
  '{"name":"a","categoryId":{"constructor":{"prototype":{"polluted":"yes"}}}}',
  '[{"__proto__":{"polluted":"yes"}}]',
  '{"__proto__":[]}',
  '{"__proto__":null,"name":"a","categoryId":1}',
];
const QUERIES = [
  "__proto__[polluted]=yes",
  "__proto__.polluted=yes",
  "constructor[prototype][polluted]=yes",
  "constructor.prototype.polluted=yes",
  "limit=1&__proto__=x&status=sold",
  "cursor=__proto__",
  "status=__proto__",
  "limit=constructor",
];
const PATHS = [
  "/v1/__proto__",
  "/v1/constructor",
  "/v1/prototype",
  "/v1/toString",
  "/v1/hasOwnProperty",
  "/v1/valueOf",
  "/v1/pets/__proto__",
  "/v1/pets/constructor",
  "/__proto__",
];

function assertUnpolluted(before: Record<string, string[]>) {
  assert.equal(prototypeSnapshot(), before, "the built-in prototypes are unchanged");
  const probe = {} as Record<string, unknown>;
  assert.is(probe.polluted, undefined);
  assert.is(probe.constructor, Object);
  assert.is(Object.getPrototypeOf(probe), Object.prototype);
  assert.is(typeof probe.toString, "function");
}

test("pollution: __proto__ / constructor / prototype in bodies, queries, headers, request ids and paths change no prototype (handle())", async () => {
  const before = prototypeSnapshot();
  const store = createPetStore({ auth: [KEY], onError: () => {} });
  const auth = { authorization: `Bearer ${KEY}` };
  for (const body of BODIES) {
    const res = await store.handle({
      method: "POST",
      path: "/v1/pets",
      headers: { ...auth, "content-type": "application/json" },
      body,
    });
    assert.is(res.status, 400, body);
    assert.is(JSON.parse(res.body).code, "invalid_body", body);
  }
  for (const query of QUERIES) {
    const res = await store.handle({ method: "GET", path: "/v1/pets", query, headers: auth });
    assert.ok(res.status === 200 || res.status === 400, `${query}: ${res.status}`);
  }
  for (const path of PATHS) {
    const res = await store.handle({ method: "GET", path, headers: auth });
    const code = JSON.parse(res.body).code;
    assert.ok(code === "not_found" || code === "invalid_pet_id", `${path}: ${code}`);
  }
  // Header objects with "__proto__" and "constructor" as own names, as a parsed header block could give.
  const headers = JSON.parse(
    `{"authorization":"Bearer ${KEY}","__proto__":{"authorization":"x","polluted":"yes"},"constructor":"x","x-request-id":"__proto__"}`,
  );
  const res = await store.handle({ method: "GET", path: "/v1/pets", headers });
  assert.is(res.status, 200);
  assert.is(res.headers["x-request-id"], "__proto__", "a valid request id is echoed as a plain string");
  assertUnpolluted(before);
});

test("pollution: the body that says __proto__ is refused with 400 invalid_body naming the field, never created", async () => {
  const store = createPetStore({ auth: [KEY], onError: () => {} });
  const res = await store.handle({
    method: "POST",
    path: "/v1/pets",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: '{"name":"a","categoryId":1,"__proto__":{"status":"sold"}}',
  });
  assert.is(res.status, 400);
  const body = JSON.parse(res.body);
  assert.ok(
    body.details.some((d: { path: string }) => d.path === "__proto__"),
    `details name __proto__: ${res.body}`,
  );
  assert.equal((await store.listPets()).pets, []);
});

test("pollution: the same inputs over a socket, plus header lines named __proto__ and constructor, change no prototype of the server process", async () => {
  const before = prototypeSnapshot();
  const server = await startServer({
    port: 0,
    host: "127.0.0.1",
    storage: "memory",
    basePath: "/v1",
    logLevel: "silent",
    apiKeys: [KEY],
  });
  try {
    const base: [string, string][] = [
      ["host", "127.0.0.1"],
      ["authorization", `Bearer ${KEY}`],
      ["__proto__", "polluted"],
      ["constructor", "polluted"],
      ["prototype", "polluted"],
      ["x-request-id", "__proto__"],
      ["connection", "close"],
    ];
    const statuses: number[] = [];
    const send = async (method: string, target: string, body = "") => {
      const headers: [string, string][] = body
        ? [...base, ["content-type", "application/json"], ["content-length", String(Buffer.byteLength(body))]]
        : base;
      const outcome = await rawExchange(server.port, [requestHead(method, target, headers), body]);
      assert.is(outcome.kind, "answer", `${method} ${target}`);
      if (outcome.kind === "answer") {
        statuses.push(outcome.answer.status);
        JSON.parse(outcome.answer.body.toString()); // a contract answer: JSON
      }
    };
    for (const body of BODIES) await send("POST", "/v1/pets", body);
    for (const query of QUERIES) await send("GET", `/v1/pets?${query}`);
    for (const path of PATHS) await send("GET", path);
    assert.ok(
      statuses.every((s) => [200, 400, 404].includes(s)),
      `statuses: ${statuses.join(",")}`,
    );
    assert.ok(
      statuses.slice(0, BODIES.length).every((s) => s === 400),
      "every polluting body was refused",
    );
  } finally {
    await server.close();
  }
  assertUnpolluted(before);
});

test.run();
