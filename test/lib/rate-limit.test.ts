/**
 * Rate limits (`createPetStore({ rateLimit })`, contract 1.3): per caller (the key's scope), fixed
 * windows, the IETF headers on every counted answer, 429 with Retry-After, nothing stored when
 * refused; what is not counted; the limiter's leases over a shared counter, and a counter that
 * fails never refusing by itself.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { tokenId } from "../../lib/auth/principal.ts";
import type { RateCounter, RateLease } from "../../lib/entries/storage.ts";
import { memoryStorage } from "../../lib/entries/storage.ts";
import type { PetStoreOptions } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";
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
  const limiter = new RateLimiter({ limit: 2, windowSeconds: 10 }, { counter: undefined, onCounterError: () => {} });
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
  const limiter = new RateLimiter({ limit: 1000, windowSeconds: 60 }, { counter, onCounterError: () => {} });
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
  const make = () => new RateLimiter({ limit: 500, windowSeconds: 60 }, { counter, onCounterError: () => {} });
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

test("rate limit: a counter that fails never refuses: requests go on, counted by the process, and the first failure of a run is reported", async () => {
  const errors: unknown[] = [];
  let calls = 0;
  let down = true;
  const flaky: RateCounter = {
    lease: async ({ want }) => {
      calls++;
      if (down) throw new Error("connection refused");
      return { granted: want, used: want };
    },
  };
  const limiter = new RateLimiter(
    { limit: 3, windowSeconds: 60 },
    { counter: flaky, onCounterError: (e) => errors.push(e) },
  );
  const now = Date.now();
  const verdicts = [];
  for (let i = 0; i < 4; i++) verdicts.push(await limiter.admit("s", now));
  assert.equal(
    verdicts.map((v) => v.allowed),
    [true, true, true, false],
    "the process's own count still holds the limit",
  );
  assert.is(calls, 4, "each request without a lease asks the counter again: no cool-off of the limiter's own");
  assert.is(errors.length, 1, "reported once while it keeps failing");
  down = false;
  await limiter.admit("t", now);
  down = true;
  await limiter.admit("u", now);
  assert.is(errors.length, 2, "a failure after an answer is reported again");
});

test("rate limit: through the store, a counter that hangs is ended by the store's time-out and the request answered", async () => {
  const errors: unknown[] = [];
  const storage = {
    ...memoryStorage(),
    cannotHang: false,
    rateCounter: { lease: () => new Promise<never>(() => {}) },
  };
  const store = createPetStore({
    auth: [KEY],
    storage,
    operationTimeoutMs: 50,
    rateLimit: { limit: 5, windowSeconds: 60 },
    onError: (e) => errors.push(e),
  });
  const r = await list(store as never);
  assert.is(r.status, 200);
  const messages = errors.map(
    (e) => `${(e as Error).message} (${String(((e as Error).cause as Error)?.cause ?? (e as Error).cause)})`,
  );
  assert.equal(messages.length, 2, messages.join("\n"));
  assert.match(
    messages[0] as string,
    /did not answer in time.*no answer within 50 ms/,
    "the guard's time-out, reported",
  );
  assert.match(messages[1] as string, /rate limit counter failed/);
});

test("rate limit: a lease while the storage's breaker is open answers at once, without asking the counter", async () => {
  let calls = 0;
  const storage = {
    ...memoryStorage(),
    cannotHang: false,
    rateCounter: {
      lease: () => {
        calls++;
        return new Promise<never>(() => {});
      },
    },
  };
  const store = createPetStore({
    auth: [KEY, OTHER],
    storage,
    operationTimeoutMs: 200,
    breaker: { failures: 1, probeIntervalMs: 60_000 },
    rateLimit: { limit: 5, windowSeconds: 60 },
    onError: () => {},
  });
  await list(store as never); // the lease times out: the breaker opens
  assert.is(calls, 1);
  const started = performance.now();
  const r = await list(store as never, OTHER); // a caller without a lease
  const waited = performance.now() - started;
  assert.is(calls, 1, "the counter was not asked");
  assert.ok(waited < 200, `answered in ${waited.toFixed(0)} ms, under the 200 ms time-out`);
  assert.is(r.status, 503, "the breaker answers the page too");
  assert.match(r.headers.ratelimit ?? "", /^"default";r=4;t=\d+$/, "counted by the process");
});

test("rate limit: the limiter's memory never holds a token, only the principals' ids (digests of keys)", () => {
  const { counter } = fakeCounter();
  const limiter = new RateLimiter({ limit: 3, windowSeconds: 60 }, { counter, onCounterError: () => {} });
  const tokens = Array.from({ length: 50 }, (_, i) => `secret-token-${i}-0123456789abcdef`);
  for (const token of tokens) limiter.admit(tokenId(token)); // as the handler admits a key's principal
  const strings: string[] = [];
  const seen = new Set<unknown>();
  const walk = (value: unknown) => {
    if (typeof value === "string") strings.push(value);
    if (typeof value !== "object" || value === null || seen.has(value)) return;
    seen.add(value);
    if (value instanceof Map) {
      for (const [k, v] of value) {
        walk(k);
        walk(v);
      }
    } else for (const key of Object.getOwnPropertyNames(value)) walk((value as Record<string, unknown>)[key]);
  };
  walk(limiter);
  assert.ok(strings.includes(tokenId(tokens[0] as string)), "the ids are there");
  for (const token of tokens)
    assert.not.ok(
      strings.some((text) => text.includes(token)),
      token,
    );
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
