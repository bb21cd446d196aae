/**
 * Failed authentications throttled per client address (contract 1.4, "Who is calling"): past the
 * limit that address gets 429 rate_limited with Retry-After, its token unchecked and no span made,
 * while every other address is served; counted across stores sharing a storage's rate counter;
 * one onThrottled call per address and window; X-Forwarded-For only behind a trusted proxy.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createNodeHandler } from "../../../adapters/node-http.ts";
import type { AuthThrottledObservation } from "../../../lib/entries/auth.ts";
import { redisStorage } from "../../../lib/entries/storage.ts";
import type { PetStore, PetStoreOptions } from "../../../lib/index.ts";
import { createPetStore } from "../../../lib/index.ts";
import { REDIS_URL, RUN, serviceAvailable } from "../../storage/services.ts";
import { errorOf } from "../../support/helpers.ts";
import { recordSpans, registerContext } from "../../support/tracing.ts";

const KEY = "the-valid-key-1234";

function store(
  auth: Partial<Exclude<PetStoreOptions["auth"], readonly unknown[] | ((t: string) => unknown)>> = {},
  more: Partial<PetStoreOptions> = {},
) {
  return createPetStore({ auth: { keys: [KEY], ...auth }, onError: () => {}, ...more });
}

const from = (s: PetStore, clientAddress: string | undefined, token: string, headers: Record<string, string> = {}) =>
  s.handle({
    method: "GET",
    path: "/v1/pets",
    headers: { authorization: `Bearer ${token}`, ...headers },
    clientAddress,
  });

test("throttle: 30 bad keys a minute by default; past them the address gets 429 rate_limited with Retry-After, even with a valid key", async () => {
  const s = store();
  for (let i = 0; i < 30; i++) assert.is((await from(s, "10.0.0.1", `guess-${i}`)).status, 401, `guess ${i}`);
  const refused = await from(s, "10.0.0.1", KEY);
  assert.is(refused.status, 429);
  assert.is(errorOf(refused).code, "rate_limited");
  const retry = Number(refused.headers["retry-after"]);
  assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  assert.ok(refused.headers["x-request-id"], "still a request id");
});

test("throttle: another address is never slowed, and a request without an address (in process) is not throttled", async () => {
  const s = store({ failureLimit: 3 });
  for (let i = 0; i < 5; i++) await from(s, "10.0.0.1", "bad");
  assert.is((await from(s, "10.0.0.1", KEY)).status, 429);
  assert.is((await from(s, "10.0.0.2", KEY)).status, 200);
  for (let i = 0; i < 5; i++) assert.is((await from(s, undefined, "bad")).status, 401);
  assert.is((await from(s, undefined, KEY)).status, 200);
});

test("throttle: a throttled request's token is not checked, and it makes no span", async () => {
  const unregister = registerContext();
  const { provider, spans, reset } = recordSpans();
  let checked = 0;
  const s = createPetStore({
    auth: {
      verify: (token) => {
        checked++;
        return token === KEY;
      },
      failureLimit: 2,
    },
    tracerProvider: provider,
  });
  await from(s, "10.0.0.9", "bad");
  await from(s, "10.0.0.9", "bad");
  reset();
  const before = checked;
  assert.is((await from(s, "10.0.0.9", KEY)).status, 429);
  assert.is(checked, before, "the token was not checked");
  assert.equal(spans(), [], "no span");
  unregister();
});

test("throttle: missing credentials and a valid key without the scope are not failures; onThrottled is told once per address and window", async () => {
  const told: AuthThrottledObservation[] = [];
  const s = createPetStore({
    auth: {
      keys: [{ name: "ro", key: KEY, scopes: ["pets:read"] }],
      failureLimit: { limit: 2, windowSeconds: 60, onThrottled: (t) => void told.push(t) },
    },
  });
  for (let i = 0; i < 5; i++) {
    await s.handle({ method: "GET", path: "/v1/pets", headers: {}, clientAddress: "10.0.0.3" });
    await s.handle({
      method: "POST",
      path: "/v1/pets",
      headers: { authorization: `Bearer ${KEY}` },
      clientAddress: "10.0.0.3",
    });
  }
  assert.is((await from(s, "10.0.0.3", KEY)).status, 200, "no failure counted");
  for (let i = 0; i < 4; i++) await from(s, "10.0.0.3", "bad");
  assert.equal(told, [{ kind: "authThrottled", address: "10.0.0.3", limit: 2, windowSeconds: 60 }]);
});

test("throttle: X-Forwarded-For's last hop is the address only when the proxy is trusted; ::ffff:-mapped addresses are IPv4", async () => {
  const trusting = store({ failureLimit: 2, trustProxy: true });
  for (let i = 0; i < 2; i++) await from(trusting, "127.0.0.1", "bad", { "x-forwarded-for": "6.6.6.6, 203.0.113.7" });
  assert.is((await from(trusting, "127.0.0.1", KEY, { "x-forwarded-for": "1.1.1.1, 203.0.113.7" })).status, 429);
  assert.is(
    (await from(trusting, "127.0.0.1", KEY, { "x-forwarded-for": "203.0.113.8" })).status,
    200,
    "the proxy itself is not refused",
  );
  const plain = store({ failureLimit: 2 });
  for (let i = 0; i < 2; i++) await from(plain, "::ffff:10.1.1.1", "bad", { "x-forwarded-for": `9.9.9.${i}` });
  assert.is((await from(plain, "10.1.1.1", KEY)).status, 429, "the socket's address, forwarded-for ignored");
});

test("throttle: auth.failureLimit false turns it off; bad values are TypeErrors", async () => {
  const s = store({ failureLimit: false });
  for (let i = 0; i < 40; i++) await from(s, "10.0.0.4", "bad");
  assert.is((await from(s, "10.0.0.4", KEY)).status, 200);
  for (const failureLimit of [0, -1, 1.5, "30", { limit: 3, windowSeconds: 0 }, { limit: 3, onThrottled: 1 }]) {
    assert.throws(() => store({ failureLimit: failureLimit as number }), TypeError, JSON.stringify(failureLimit));
  }
  assert.throws(() => store({ trustProxy: "yes" as unknown as boolean }), TypeError);
});

test("throttle over sockets: bad keys from 127.0.0.1 are refused past the limit while a valid key from 127.0.0.2 gets every answer", async () => {
  const s = store({ failureLimit: 10 });
  const server = createServer(createNodeHandler(s));
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
  const { port } = server.address() as AddressInfo;
  const statuses = { bad: [] as number[], good: [] as number[] };
  const { request } = await import("node:http");
  const get = (localAddress: string, token: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          path: "/v1/pets",
          localAddress,
          headers: { authorization: `Bearer ${token}` },
          agent: false,
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end();
    });
  const attacker = (async () => {
    for (let i = 0; i < 50; i++) statuses.bad.push(await get("127.0.0.1", `guess-${i}`));
  })();
  const client = (async () => {
    for (let i = 0; i < 50; i++) statuses.good.push(await get("127.0.0.2", KEY));
  })();
  await Promise.all([attacker, client]);
  server.close();
  assert.equal(statuses.bad.slice(0, 10), Array(10).fill(401));
  assert.equal(statuses.bad.slice(10), Array(40).fill(429));
  assert.equal(statuses.good, Array(50).fill(200));
});

if (serviceAvailable("redis", "throttle across processes")) {
  test("throttle: counted across stores sharing a Redis rate counter (what two processes on one storage do)", async () => {
    const open = () => redisStorage({ url: REDIS_URL, namespace: `${RUN}-throttle` });
    const [a, b] = [
      store({ failureLimit: 4 }, { storage: await open() }),
      store({ failureLimit: 4 }, { storage: await open() }),
    ];
    await from(a, "10.9.9.9", "bad");
    await from(b, "10.9.9.9", "bad");
    await from(a, "10.9.9.9", "bad");
    await from(b, "10.9.9.9", "bad");
    // The shared counter answers after each 401: ask until b has heard the fourth (a valid key
    // counts no failure), for 10 s at most (a fixed 100 ms was too short on a loaded machine).
    let status = 0;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      status = (await from(b, "10.9.9.9", KEY)).status;
      if (status === 429) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.is(status, 429, "four failures between them");
    assert.is((await from(a, "10.9.9.8", KEY)).status, 200);
    await Promise.all([a.close(), b.close()]);
  });
}

test.run();
