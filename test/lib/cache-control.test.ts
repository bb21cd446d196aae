/**
 * `Cache-Control` (contract 1.4): `private, no-cache` on a caller's 2xx by default, `no-store` on
 * errors, `createPetStore({ cacheControl })` giving pets and full pages a `max-age` (never the last
 * page), `noTransform` on every answer and `noStore` on every answer; bad options are TypeErrors.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { call, createMany, makeStore } from "../support/helpers.ts";

const cacheControl = async (options: Parameters<typeof makeStore>[0], path: string, query?: string) => {
  const store = makeStore(options);
  await createMany(store, 3);
  return (await call(store, "GET", path, query === undefined ? {} : { query })).headers["cache-control"];
};

test("cache-control: a caller's pet, page and create are private, no-cache by default; errors and the OpenAPI document no-store", async () => {
  const store = makeStore();
  await createMany(store, 3);
  const replayed = { "idempotency-key": "k-1" };
  const body = '{"name":"Rex","categoryId":1}';
  await call(store, "POST", "/v1/pets", { headers: replayed, body });
  const expected: [string, Promise<{ headers: Record<string, string> }>, string][] = [
    ["pet", call(store, "GET", "/v1/pets/1"), "private, no-cache"],
    ["full page", call(store, "GET", "/v1/pets", { query: "limit=1" }), "private, no-cache"],
    ["last page", call(store, "GET", "/v1/pets"), "private, no-cache"],
    ["create", call(store, "POST", "/v1/pets", { body }), "private, no-cache"],
    ["replayed create", call(store, "POST", "/v1/pets", { headers: replayed, body }), "private, no-cache"],
    ["404", call(store, "GET", "/v1/pets/99"), "no-store"],
    ["401", call(store, "GET", "/v1/pets", { auth: false }), "no-store"],
    ["400", call(store, "GET", "/v1/pets", { query: "limit=0" }), "no-store"],
    ["openapi.json", call(store, "GET", "/v1/openapi.json", { auth: false }), "no-store"],
  ];
  for (const [what, answer, value] of expected) assert.is((await answer).headers["cache-control"], value, what);
});

test("cache-control: petMaxAge lets a browser reuse a pet unasked: private, max-age=N", async () => {
  assert.is(await cacheControl({ cacheControl: { petMaxAge: 3600 } }, "/v1/pets/1"), "private, max-age=3600");
  assert.is(await cacheControl({ cacheControl: { petMaxAge: 3600 } }, "/v1/pets", "limit=1"), "private, no-cache");
});

test("cache-control: pageMaxAge applies to a full page (a next page follows), never to the last, still filling page", async () => {
  const options = { cacheControl: { pageMaxAge: 60 } };
  assert.is(await cacheControl(options, "/v1/pets", "limit=2"), "private, max-age=60");
  assert.is(await cacheControl(options, "/v1/pets", "limit=3"), "private, no-cache", "exactly full, but the last");
  assert.is(await cacheControl(options, "/v1/pets"), "private, no-cache");
  assert.is(await cacheControl(options, "/v1/pets/1"), "private, no-cache");
});

test("cache-control: a 304 carries the Cache-Control its 200 would", async () => {
  const store = makeStore({ cacheControl: { pageMaxAge: 60, petMaxAge: 30 } });
  await createMany(store, 3);
  for (const [path, query] of [
    ["/v1/pets", "limit=2"],
    ["/v1/pets", "limit=5"],
    ["/v1/pets/2", ""],
  ] as const) {
    const first = await call(store, "GET", path, { query });
    const again = await call(store, "GET", path, { query, headers: { "if-none-match": first.headers.etag } });
    assert.is(again.status, 304);
    assert.is(again.headers["cache-control"], first.headers["cache-control"], `${path}?${query}`);
  }
});

test("cache-control: noTransform adds no-transform to every answer, errors and preflights included", async () => {
  const store = makeStore({ cacheControl: { noTransform: true }, cors: { origins: ["https://shop.example"] } });
  await createMany(store, 1);
  const preflight = {
    origin: "https://shop.example",
    "access-control-request-method": "GET",
  };
  const answers = [
    [await call(store, "GET", "/v1/pets"), "private, no-cache, no-transform"],
    [await call(store, "GET", "/v1/pets/1"), "private, no-cache, no-transform"],
    [await call(store, "GET", "/v1/pets/9"), "no-store, no-transform"],
    [await call(store, "OPTIONS", "/v1/pets", { headers: preflight, auth: false }), "no-store, no-transform"],
  ] as const;
  for (const [answer, value] of answers) assert.is(answer.headers["cache-control"], value, String(answer.status));
});

test("cache-control: noStore keeps nothing anywhere (no-store on every answer), and still answers validators", async () => {
  const store = makeStore({ cacheControl: { noStore: true } });
  await createMany(store, 2);
  const page = await call(store, "GET", "/v1/pets", { query: "limit=1" });
  assert.is(page.headers["cache-control"], "no-store");
  assert.is((await call(store, "GET", "/v1/pets/1")).headers["cache-control"], "no-store");
  const again = await call(store, "GET", "/v1/pets", {
    query: "limit=1",
    headers: { "if-none-match": page.headers.etag },
  });
  assert.is(again.status, 304);
});

test("cache-control: options that cannot work are a TypeError naming the option", () => {
  const bad: [unknown, RegExp][] = [
    [{ petMaxAge: -1 }, /cacheControl\.petMaxAge must be a whole number of seconds/],
    [{ pageMaxAge: 1.5 }, /cacheControl\.pageMaxAge must be a whole number/],
    [{ petMaxAge: 31_536_001 }, /from 0 to 31536000/],
    [{ noTransform: "yes" }, /cacheControl\.noTransform must be true or false/],
    [{ noStore: true, petMaxAge: 10 }, /noStore keeps nothing/],
    [{ maxAge: 10 }, /unknown option "maxAge"/],
    ["private", /options must be an object/],
  ];
  for (const [cacheControl, message] of bad) {
    assert.throws(() => makeStore({ cacheControl: cacheControl as never }), message, JSON.stringify(cacheControl));
  }
});

test.run();
