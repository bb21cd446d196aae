/**
 * Rate limits (`createPetStore({ rateLimit })`, contract 1.3): per caller (the key's scope), fixed
 * windows, the IETF headers on every counted answer, 429 with Retry-After, nothing stored when
 * refused; what is not counted; the limiter's leases over a shared counter, and a counter that
 * fails never refusing by itself.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { tokenId } from "../../lib/auth/principal.ts";
import type { PetStoreOptions, RateCounter, RateLease } from "../../lib/index.ts";
import { createPetStore, memoryStorage } from "../../lib/index.ts";
import { RateLimiter } from "../../lib/rate-limit.ts";
import { AUTH, call, errorOf, KEY } from "../support/helpers.ts";

const OTHER = "another-key-0123456789";

const limited = (rateLimit: PetStoreOptions["rateLimit"], options: Partial<PetStoreOptions> = {}) =>
  createPetStore({ auth: [KEY, OTHER], onError: () => {}, rateLimit, ...options });

const list = (store: ReturnType<typeof limited>, key = KEY) =>
  store.handle({ method: "GET", path: "/v1/pets", headers: { authorization: `Bearer ${key}` } });

/** A shared counter in this process, as a backend keeps it: the window's count and what each lease asked. */
function fakeCounter() {
  const counts = new Map<string, number>();
  const leases: RateLease[] = [];
  const counter: RateCounter = {
    async lease(lease) {
      leases.push(lease);
      const name = `${lease.scope} ${lease.window}`;
      const used = counts.get(name) ?? 0;
      const granted = Math.max(0, Math.min(lease.want, lease.limit - used));
      counts.set(name, used + granted);
      return { granted, used: used + granted };
    },
  };
  return { counter, leases, counts };
}

test("rate limit: off by default: no RateLimit header, no 429", async () => {
  const store = createPetStore({ auth: [KEY] });
  for (let i = 0; i < 50; i++) {
    const r = await call(store, "GET", "/v1/pets", { headers: { authorization: AUTH } });
    assert.is(r.status, 200);
    assert.is(r.headers.ratelimit, undefined);
    assert.is(r.headers["ratelimit-policy"], undefined);
  }
});

test("rate limit: the headers' exact form and their countdown, then 429 rate_limited with Retry-After", async () => {
  const store = limited({ limit: 3, windowSeconds: 60 });
  const seen: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await list(store);
    assert.is(r.status, 200);
    assert.is(r.headers["ratelimit-policy"], '"default";q=3;w=60');
    const match = /^"default";r=(\d+);t=(\d+)$/.exec(r.headers.ratelimit ?? "");
    assert.ok(match, r.headers.ratelimit);
    const t = Number(match?.[2]);
    assert.ok(t >= 1 && t <= 60, `t=${t}`);
    seen.push(match?.[1] as string);
  }
  assert.equal(seen, ["2", "1", "0"]);
  const refused = await list(store);
  assert.is(refused.status, 429);
  assert.is(errorOf(refused).code, "rate_limited");
  assert.is(errorOf(refused).status, 429);
  const retryAfter = Number(refused.headers["retry-after"]);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, refused.headers["retry-after"]);
  assert.match(refused.headers.ratelimit ?? "", new RegExp(`^"default";r=0;t=${retryAfter}$`));
  assert.is(refused.headers["ratelimit-policy"], '"default";q=3;w=60');
  assert.ok(refused.headers["x-request-id"]);
});

test("rate limit: a refused create stores nothing; another key is not affected", async () => {
  const store = limited({ limit: 2, windowSeconds: 60 });
  const create = (key: string, name: string) =>
    store.handle({
      method: "POST",
      path: "/v1/pets",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ name, categoryId: 1 }),
    });
  assert.is((await create(KEY, "a")).status, 201);
  assert.is((await create(KEY, "b")).status, 201);
  const refused = await create(KEY, "c");
  assert.is(refused.status, 429);
  assert.equal(
    (await store.listPets({})).pets.map((p) => p.name),
    ["a", "b"],
  );
  const other = await create(OTHER, "d");
  assert.is(other.status, 201);
  assert.match(other.headers.ratelimit ?? "", /^"default";r=1;t=\d+$/);
});

test("rate limit: every answer of an admitted request carries the headers, errors included; 401s, 405s, 404s, docs and preflights are not counted", async () => {
  const store = limited({ limit: 5, windowSeconds: 60 }, { cors: { origins: ["https://shop.example"] } });
  const h = { authorization: AUTH };
  const counted = [
    await call(store, "GET", "/v1/pets/999", { headers: h }), // 404 pet_not_found
    await call(store, "GET", "/v1/pets?limit=0", { headers: h }), // 400 invalid_query
    await call(store, "POST", "/v1/pets", { headers: { ...h, "content-type": "application/json" }, body: "{" }),
  ];
  assert.equal(
    counted.map((r) => [r.status, r.headers.ratelimit?.replace(/t=\d+/, "t")]),
    [
      [404, '"default";r=4;t'],
      [400, '"default";r=3;t'],
      [400, '"default";r=2;t'],
    ],
  );
  const uncounted = [
    await call(store, "GET", "/v1/pets", { auth: false }), // 401 missing
    await call(store, "GET", "/v1/pets", { auth: false, headers: { authorization: "Bearer wrong" } }), // 401 invalid
    await call(store, "DELETE", "/v1/pets", { headers: h }), // 405
    await call(store, "GET", "/v1/nothing", { headers: h }), // 404 not_found
    await call(store, "GET", "/v1/openapi.json", { headers: h }), // docs
    await store.handle({
      method: "OPTIONS",
      path: "/v1/pets",
      headers: { origin: "https://shop.example", "access-control-request-method": "POST" },
    }),
  ];
  assert.equal(
    uncounted.map((r) => [r.status, r.headers.ratelimit]),
    [
      [401, undefined],
      [401, undefined],
      [405, undefined],
      [404, undefined],
      [200, undefined],
      [204, undefined],
    ],
  );
  const next = await call(store, "GET", "/v1/pets", { headers: h });
  assert.match(next.headers.ratelimit ?? "", /^"default";r=1;t=\d+$/);
});

test("rate limit: CORS exposes RateLimit, RateLimit-Policy and Retry-After", async () => {
  const store = limited({ limit: 1, windowSeconds: 60 }, { cors: { origins: ["https://shop.example"] } });
  const r = await call(store, "GET", "/v1/pets", { headers: { authorization: AUTH, origin: "https://shop.example" } });
  const exposed = (r.headers["access-control-expose-headers"] ?? "").split(", ");
  for (const name of ["RateLimit", "RateLimit-Policy", "Retry-After"]) assert.ok(exposed.includes(name), name);
});

test("rate limit: a new window admits again (the limiter's clock), and t counts down to the window's end", () => {
  const limiter = new RateLimiter(
    { limit: 2, windowSeconds: 10 },
    { counter: undefined, timeoutMs: 100, onCounterError: () => {} },
  );
  const start = 1_700_000_000_000; // a window boundary: 10 s windows from the epoch
  const at = (ms: number) => limiter.admit("s", start + ms) as ReturnType<RateLimiter["admit"]> & { allowed: boolean };
  const a = limiter.admit("s", start + 2_500);
  assert.equal(a, {
    allowed: true,
    first: false,
    headers: { "ratelimit-policy": '"default";q=2;w=10', ratelimit: '"default";r=1;t=8' },
  });
  assert.is((at(9_000) as { allowed: boolean }).allowed, true);
  const refused = limiter.admit("s", start + 9_001) as {
    allowed: boolean;
    first: boolean;
    headers: Record<string, string>;
  };
  assert.equal(refused, {
    allowed: false,
    first: true,
    headers: { "ratelimit-policy": '"default";q=2;w=10', ratelimit: '"default";r=0;t=1', "retry-after": "1" },
  });
  assert.is((limiter.admit("s", start + 9_500) as { first: boolean }).first, false, "one first refusal per window");
  const next = limiter.admit("s", start + 10_000) as { allowed: boolean; headers: Record<string, string> };
  assert.is(next.allowed, true);
  assert.is(next.headers.ratelimit, '"default";r=1;t=10');
});

test("rate limit: over a shared counter, a process leases a tenth of what is left and spends it without asking again", async () => {
  const { counter, leases } = fakeCounter();
  const limiter = new RateLimiter(
    { limit: 1000, windowSeconds: 60 },
    { counter, timeoutMs: 1000, onCounterError: () => {} },
  );
  const now = 1_700_000_000_000;
  let admitted = 0;
  let waited = 0;
  for (let i = 0; i < 1200; i++) {
    await new Promise(setImmediate); // requests arrive over time, as on a server
    let verdict = limiter.admit("s", now + i);
    if (verdict instanceof Promise) {
      waited++;
      verdict = await verdict;
    }
    if (verdict.allowed) admitted++;
  }
  assert.is(admitted, 1000);
  assert.is(leases[0]?.want, 100);
  assert.ok(leases.length < 80, `${leases.length} leases`);
  assert.ok(waited <= 3, `${waited} requests waited on the counter`); // the next lease is asked for at half of the last
  for (const lease of leases) assert.equal([lease.scope, lease.limit, lease.windowSeconds], ["s", 1000, 60]);
});

test("rate limit: two processes on one counter admit no more than the limit between them, and nearly all of it", async () => {
  const { counter } = fakeCounter();
  const make = () =>
    new RateLimiter({ limit: 500, windowSeconds: 60 }, { counter, timeoutMs: 1000, onCounterError: () => {} });
  const processes = [make(), make()];
  const now = 1_700_000_000_000;
  let admitted = 0;
  for (let i = 0; i < 2000; i++) {
    const verdict = await processes[i % 2]?.admit("s", now + i);
    if (verdict?.allowed) admitted++;
  }
  assert.ok(admitted <= 500, `${admitted} admitted`);
  assert.ok(admitted >= 500 - 50 - 2, `${admitted} admitted`); // within 10% of the limit plus one per process
});

test("rate limit: a counter that fails or hangs never refuses: requests go on, counted by the process, and the failure is reported", async () => {
  const errors: unknown[] = [];
  const failing: RateCounter = { lease: () => Promise.reject(new Error("connection refused")) };
  const limiter = new RateLimiter(
    { limit: 3, windowSeconds: 60 },
    { counter: failing, timeoutMs: 1000, onCounterError: (e) => errors.push(e) },
  );
  const now = Date.now();
  const verdicts = [];
  for (let i = 0; i < 4; i++) verdicts.push(await limiter.admit("s", now));
  assert.equal(
    verdicts.map((v) => v.allowed),
    [true, true, true, false],
    "the process's own count still holds the limit",
  );
  assert.is(errors.length, 1, "asked again only after a pause");

  const hanging: RateCounter = { lease: () => new Promise(() => {}) };
  const slow = new RateLimiter(
    { limit: 3, windowSeconds: 60 },
    { counter: hanging, timeoutMs: 50, onCounterError: (e) => errors.push(e) },
  );
  const started = Date.now();
  const verdict = await slow.admit("s");
  assert.is(verdict.allowed, true);
  assert.ok(Date.now() - started < 1000);
  assert.match(String(errors[1]), /no answer in 50 ms/);
});

test("rate limit: through the store, a failing counter is reported to onError and the request is answered", async () => {
  const errors: unknown[] = [];
  const storage = {
    ...memoryStorage(),
    cannotHang: false,
    rateCounter: { lease: () => Promise.reject(new Error("down")) },
  };
  const store = createPetStore({
    auth: [KEY],
    storage,
    rateLimit: { limit: 5, windowSeconds: 60 },
    onError: (e) => errors.push(e),
  });
  const r = await list(store as never);
  assert.is(r.status, 200);
  assert.match(r.headers.ratelimit ?? "", /^"default";r=4;t=\d+$/);
  assert.is(errors.length, 1);
  assert.match((errors[0] as Error).message, /rate limit counter failed/);
  assert.match(String((errors[0] as Error).cause), /down/);
});

test("rate limit: the scope is the principal's id (never the key), and the observer hears each refusal (the first of a window marked)", async () => {
  const heard: unknown[] = [];
  const store = limited(
    { limit: 1, windowSeconds: 60 },
    { observe: (o) => (o.kind === "rateLimited" ? heard.push(o) : undefined) },
  );
  await list(store);
  await list(store);
  await list(store);
  assert.equal(heard, [
    { kind: "rateLimited", scope: tokenId(KEY), first: true, limit: 1, windowSeconds: 60 },
    { kind: "rateLimited", scope: tokenId(KEY), first: false, limit: 1, windowSeconds: 60 },
  ]);
});

test("rate limit: onLimited hears each refusal without an observer; what it throws goes to onError and the 429 stands", async () => {
  const heard: unknown[] = [];
  const errors: unknown[] = [];
  const store = limited(
    {
      limit: 1,
      windowSeconds: 60,
      onLimited: (refusal) => {
        heard.push(refusal);
        throw new Error("listener broke");
      },
    },
    { onError: (error) => errors.push(error) },
  );
  assert.is((await list(store)).status, 200);
  assert.is((await list(store)).status, 429);
  assert.is((await list(store)).status, 429);
  assert.equal(heard, [
    { kind: "rateLimited", scope: tokenId(KEY), first: true, limit: 1, windowSeconds: 60 },
    { kind: "rateLimited", scope: tokenId(KEY), first: false, limit: 1, windowSeconds: 60 },
  ]);
  assert.equal(
    errors.map((e) => (e as Error).message),
    ["listener broke", "listener broke"],
  );
});

test("rate limit: bad options are a TypeError naming what is wrong", () => {
  const cases: [unknown, RegExp][] = [
    [null, /rateLimit must be \{ limit, windowSeconds \}/],
    [5, /rateLimit must be \{ limit, windowSeconds \}/],
    [{ limit: 0, windowSeconds: 60 }, /limit must be an integer from 1/],
    [{ limit: 1.5, windowSeconds: 60 }, /limit must be an integer from 1/],
    [{ limit: "10", windowSeconds: 60 }, /limit must be an integer from 1/],
    [{ limit: 10 }, /windowSeconds must be an integer from 1 to 86400/],
    [{ limit: 10, windowSeconds: 86_401 }, /windowSeconds must be an integer from 1 to 86400/],
    [{ limit: 10, windowSeconds: 60, burst: 5 }, /unknown rateLimit option "burst"/],
    [{ limit: 10, windowSeconds: 60, onLimited: "log" }, /onLimited must be a function/],
  ];
  for (const [rateLimit, message] of cases) {
    assert.throws(
      () => createPetStore({ auth: [KEY], rateLimit: rateLimit as never }),
      (e: unknown) => e instanceof TypeError && message.test((e as Error).message),
    );
  }
});

test.run();
