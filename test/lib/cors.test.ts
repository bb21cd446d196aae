/**
 * CORS (`createPetStore({ cors })`, contract 1.2): off by default; a preflight from an allowed
 * origin is answered 204 before the key, with the path's methods; every answer to an allowed
 * origin, errors included, names it and exposes the contract's headers; other origins are answered
 * exactly as before, without CORS headers.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { memoryStorage } from "../../lib/entries/storage.ts";
import type { PetStoreOptions, PetStoreResponse } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";
import { AUTH, call, errorOf, KEY } from "../support/helpers.ts";

const SHOP = "https://shop.example";
const EXPOSED =
  "Link, Location, X-Request-Id, Retry-After, Deprecation, Sunset, Idempotent-Replayed, WWW-Authenticate, ETag";

const store = (options: Partial<PetStoreOptions> = {}) =>
  createPetStore({ auth: [KEY], onError: () => {}, cors: { origins: [SHOP] }, ...options });

const preflight = (s: ReturnType<typeof store>, path: string, origin = SHOP, method = "POST") =>
  s.handle({ method: "OPTIONS", path, headers: { origin, "access-control-request-method": method } });

/** The response's headers without the request id (random) and the CORS ones. */
function withoutCors(response: PetStoreResponse) {
  const { "x-request-id": _id, ...rest } = response.headers;
  return Object.fromEntries(
    Object.entries(rest).filter(([name]) => !name.startsWith("access-control-") && name !== "vary"),
  );
}

test("cors: off by default: an Origin changes nothing and a preflight is 405 with Allow, no CORS header", async () => {
  const s = createPetStore({ auth: [KEY] });
  const answer = await preflight(s as never, "/v1/pets");
  assert.is(answer.status, 405);
  assert.is(answer.headers.allow, "GET, HEAD, POST");
  const page = await call(s, "GET", "/v1/pets", { headers: { origin: SHOP } });
  assert.is(page.status, 200);
  for (const r of [answer, page]) {
    assert.equal(
      Object.keys(r.headers).filter((name) => name.startsWith("access-control-")),
      [],
    );
  }
  assert.is(answer.headers.vary, undefined);
  assert.is(page.headers.vary, "Accept-Encoding", "a page's own Vary, no Origin");
});

test("cors: a preflight from an allowed origin is 204 before any key, with the path's methods, the allowed headers, max-age and Vary", async () => {
  const s = store();
  const cases: [string, string][] = [
    ["/v1/pets", "GET, HEAD, POST"],
    ["/v1/pets/1", "GET, HEAD"],
    ["/v1/pets/999999", "GET, HEAD"],
    ["/v1/openapi.json", "GET, HEAD"],
  ];
  for (const [path, methods] of cases) {
    const answer = await preflight(s, path);
    assert.is(answer.status, 204, path);
    assert.is(answer.body, "");
    const { "x-request-id": id, ...headers } = answer.headers;
    assert.match(id as string, /^[0-9a-f-]{36}$/);
    assert.equal(headers, {
      "cache-control": "no-store",
      "access-control-allow-origin": SHOP,
      "access-control-expose-headers": EXPOSED,
      vary: "Origin",
      "access-control-allow-methods": methods,
      "access-control-allow-headers": "Authorization, Content-Type, Idempotency-Key, X-Request-Id, If-None-Match",
      "access-control-max-age": "600",
      "x-content-type-options": "nosniff",
    });
  }
  const tuned = store({ cors: { origins: [SHOP], maxAge: 86_400 } });
  assert.is((await preflight(tuned, "/v1/pets")).headers["access-control-max-age"], "86400");
});

test("cors: every answer to an allowed origin, errors included, names it and exposes the contract's headers", async () => {
  let failing = false;
  const memory = memoryStorage();
  const storage: PetStorage = {
    ...memory,
    kind: "flaky",
    inProcess: false,
    list: (page) => (failing ? Promise.reject(new Error("down")) : Promise.resolve(memory.list(page))),
  };
  const s = store({ storage });
  const origin = { origin: SHOP };
  const created = await call(s, "POST", "/v1/pets", {
    headers: { ...origin, "idempotency-key": "k1" },
    body: '{"name":"Rex","categoryId":1}',
  });
  const answers: [string, PetStoreResponse][] = [
    ["201", created],
    ["200 page", await call(s, "GET", "/v1/pets", { headers: origin })],
    ["200 pet", await call(s, "GET", "/v1/pets/1", { headers: origin })],
    ["401", await call(s, "GET", "/v1/pets", { headers: origin, auth: false })],
    ["400", await call(s, "GET", "/v1/pets", { headers: origin, query: "limit=0" })],
    ["404 pet", await call(s, "GET", "/v1/pets/99", { headers: origin })],
    ["404 route", await call(s, "GET", "/v1/owners", { headers: origin })],
    ["405", await call(s, "DELETE", "/v1/pets", { headers: origin })],
    ["405 OPTIONS without preflight", await call(s, "OPTIONS", "/v1/pets", { headers: origin })],
    ["415", await call(s, "POST", "/v1/pets", { headers: { ...origin, "content-type": "text/plain" }, body: "x" })],
    ["413", await call(s, "POST", "/v1/pets", { headers: { ...origin, "content-length": "999999" }, body: "{}" })],
  ];
  failing = true;
  answers.push(["503", await call(s, "GET", "/v1/pets", { headers: origin })]);
  for (const [what, answer] of answers) {
    assert.is(answer.headers["access-control-allow-origin"], SHOP, what);
    assert.is(answer.headers["access-control-expose-headers"], EXPOSED, what);
    // A pet and a page also vary with their coding (a host or proxy may compress them).
    assert.is(answer.headers.vary, what.startsWith("200") ? "Origin, Accept-Encoding" : "Origin", what);
    assert.is(answer.headers["access-control-allow-methods"], undefined, `${what}: only a preflight lists methods`);
  }
  assert.is(errorOf(answers[3]?.[1] as PetStoreResponse).code, "unauthorized", "a page reads the 401's body");
  assert.is(created.status, 201);
});

test("cors: another origin's requests, preflights included, are answered as before, without CORS headers", async () => {
  const s = store();
  const plain = createPetStore({ auth: [KEY], onError: () => {} });
  const other = { origin: "https://evil.example" };
  const pairs: [PetStoreResponse, PetStoreResponse][] = [
    [await preflight(s, "/v1/pets", other.origin), await preflight(plain as never, "/v1/pets", other.origin)],
    [await call(s, "GET", "/v1/pets", { headers: other }), await call(plain, "GET", "/v1/pets", { headers: other })],
    [
      await call(s, "GET", "/v1/pets", { headers: other, auth: false }),
      await call(plain, "GET", "/v1/pets", { headers: other, auth: false }),
    ],
  ];
  for (const [ours, before] of pairs) {
    assert.is(ours.status, before.status);
    assert.equal(ours.headers["access-control-allow-origin"], undefined);
    assert.equal(withoutCors(ours), withoutCors(before));
    assert.is(ours.body, before.body);
  }
  const noOrigin = await s.handle({ method: "GET", path: "/v1/pets", headers: { authorization: AUTH } });
  assert.equal(
    Object.keys(noOrigin.headers).filter((name) => name.startsWith("access-control-")),
    [],
  );
});

test('cors: origins "*" allows any origin, answering Access-Control-Allow-Origin: *', async () => {
  const s = store({ cors: { origins: "*" } });
  const answer = await preflight(s, "/v1/pets", "http://localhost:5173");
  assert.is(answer.status, 204);
  assert.is(answer.headers["access-control-allow-origin"], "*");
  const page = await call(s, "GET", "/v1/pets", { headers: { origin: "http://localhost:5173" } });
  assert.is(page.headers["access-control-allow-origin"], "*");
});

test("cors: options that cannot work are a TypeError naming the problem", () => {
  const cases: [unknown, RegExp][] = [
    [{ origins: [] }, /cors\.origins must be "\*" or a non-empty list/],
    [{ origins: ["https://shop.example/"] }, /is not an origin/],
    [{ origins: ["shop.example"] }, /is not an origin/],
    [{ origins: "all" }, /cors\.origins must be "\*"/],
    [{ origins: "*", maxAge: -1 }, /cors\.maxAge must be a whole number/],
    [{ origins: "*", credentials: true }, /cors: unknown option "credentials"/],
    ["*", /cors must be/],
  ];
  for (const [cors, message] of cases)
    assert.throws(() => createPetStore({ auth: [KEY], cors: cors as never }), message);
});

test.run();
