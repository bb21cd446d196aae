/**
 * `petstore-lib/testing` (testing/index.ts): a test server and an in-process test store that
 * start seeded, reset between tests, slow down and fail on demand, from code only; an injected
 * failure is answered exactly as a real one.
 */
import { readdirSync, readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { memoryStorage } from "../../lib/entries/storage.ts";
import { createPetStore, RuleViolation } from "../../lib/index.ts";
import type { TestServer, TestStore } from "../../testing/index.ts";
import { createTestStore, startTestServer } from "../../testing/index.ts";
import { backends } from "../storage/backends.ts";
import { RUN } from "../storage/services.ts";

const s = suite("testing: startTestServer and createTestStore");
const open: { close(): Promise<void> }[] = [];
const cleanups: (() => Promise<void>)[] = [];
s.after.each(async () => {
  for (const kit of open.splice(0)) await kit.close();
});
s.after(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function server(options?: Parameters<typeof startTestServer>[0]): Promise<TestServer> {
  const t = await startTestServer(options);
  open.push(t);
  return t;
}

async function testStore(options?: Parameters<typeof createTestStore>[0]): Promise<TestStore> {
  const t = await createTestStore(options);
  open.push(t);
  return t;
}

const get = (t: TestServer, path: string, headers: Record<string, string> = {}) =>
  fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${t.key}`, ...headers } });

s(
  "startTestServer: a real server on 127.0.0.1 and a free port; url includes the base path; the key works",
  async () => {
    const t = await server();
    assert.match(t.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const res = await get(t, "/pets");
    assert.is(res.status, 200);
    assert.equal(await res.json(), []);
    const noKey = await fetch(`${t.url}/pets`);
    assert.is(noKey.status, 401);
    const other = await server();
    assert.is.not(new URL(other.url).port, new URL(t.url).port, "each server its own port");
  },
);

s(
  "startTestServer: pets as a count seeds pets with stable names; as a list seeds those NewPets; basePath moves the url",
  async () => {
    const counted = await server({ pets: 3 });
    assert.equal(await (await get(counted, "/pets")).json(), [
      { id: 1, name: "pet-1", categoryId: 1, status: "available" },
      { id: 2, name: "pet-2", categoryId: 1, status: "available" },
      { id: 3, name: "pet-3", categoryId: 1, status: "available" },
    ]);
    const listed = await server({ pets: [{ name: "Rex", categoryId: 4, status: "sold" }], basePath: "/api/v2" });
    assert.match(listed.url, /\/api\/v2$/);
    assert.equal(await (await get(listed, "/pets")).json(), [{ id: 1, name: "Rex", categoryId: 4, status: "sold" }]);
    assert.equal(
      await listed.store.getPet(1),
      { id: 1, name: "Rex", categoryId: 4, status: "sold" },
      "store is the server's",
    );
  },
);

s("close(): the server stops listening and the storage is closed; close is idempotent", async () => {
  const t = await startTestServer();
  await t.close();
  await t.close();
  const failed = await fetch(`${t.url}/pets`).then(
    () => false,
    () => true,
  );
  assert.ok(failed, "nothing listens any more");
});

s("reset(): empties the store and seeds it again; ids start again at 1 on memory", async () => {
  const t = await server({ pets: 2 });
  const post = () =>
    fetch(`${t.url}/pets`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Tom", categoryId: 2 }),
    });
  assert.is(((await (await post()).json()) as { id: number }).id, 3);
  await t.reset();
  assert.equal(
    ((await (await get(t, "/pets")).json()) as { name: string }[]).map((p) => p.name),
    ["pet-1", "pet-2"],
  );
  assert.is(((await (await post()).json()) as { id: number }).id, 3, "the same id as after the first start");
  assert.is((await get(t, "/pets/4")).status, 404);
});

s(
  "failNext(n, 503): the next n requests that reach an operation get the real storage_unavailable answer; 401, 404, 405 and 400 do not count",
  async () => {
    const t = await server({ pets: 1 });
    t.failNext(2, { status: 503 });
    assert.is((await fetch(`${t.url}/pets`)).status, 401, "no key: not an operation");
    assert.is((await get(t, "/nowhere")).status, 404);
    assert.is(
      (await fetch(`${t.url}/pets/1`, { method: "DELETE", headers: { authorization: `Bearer ${t.key}` } })).status,
      405,
    );
    assert.is((await get(t, "/pets?limit=0")).status, 400);
    assert.is((await get(t, "/pets/abc")).status, 400);
    const first = await get(t, "/pets");
    assert.is(first.status, 503);
    assert.is(first.headers.get("retry-after"), "1");
    assert.equal(await first.json(), {
      code: "storage_unavailable",
      message: "The storage backend is unavailable. Try again shortly.",
      status: 503,
    });
    assert.is((await get(t, "/pets/1")).status, 503, "the second one");
    assert.is((await get(t, "/pets/1")).status, 200, "then it works again");
  },
);

s(
  "failNext: an injected 503 and 500 are byte for byte the answers of a real storage failure and a real invalid value",
  async () => {
    const kit = await testStore({ pets: 1, onError: () => {} });
    // A real fault: a storage whose backend is down; a real 500: a storage that returns a broken value.
    const real = memoryStorage();
    await real.create({ name: "pet-1", categoryId: 1, status: "available" });
    let mode: "down" | "broken" = "down";
    const failing: PetStorage = {
      kind: "memory",
      create: (p) => real.create(p),
      get: async (id) => {
        if (mode === "down") throw new Error("ECONNREFUSED");
        return { ...(await real.get(id)), id: "oops" } as never;
      },
      list: (page) => real.list(page),
      ping: () => real.ping(),
      close: () => real.close(),
    };
    const faulty = createPetStore({ auth: [kit.key], storage: failing, onError: () => {} });
    const headers = { authorization: `Bearer ${kit.key}`, "x-request-id": "same-id" };
    // What goes on the wire: the principal a response carries for log lines is never sent.
    const wire = ({ status, headers, body }: { status: number; headers: Record<string, string>; body: string }) => ({
      status,
      headers,
      body,
    });
    const realDown = wire(await faulty.handle({ method: "GET", path: "/v1/pets/1", headers }));
    kit.failNext(1, { status: 503 });
    const injectedDown = await kit.request("GET", "/v1/pets/1", { headers });
    assert.is(injectedDown.status, 503);
    assert.equal({ status: injectedDown.status, headers: injectedDown.headers, body: injectedDown.body }, realDown);

    mode = "broken";
    const realBroken = wire(await faulty.handle({ method: "GET", path: "/v1/pets/1", headers }));
    kit.failNext(1, { status: 500 });
    const injectedBroken = await kit.request("GET", "/v1/pets/1", { headers });
    assert.is(injectedBroken.status, 500);
    assert.equal(
      { status: injectedBroken.status, headers: injectedBroken.headers, body: injectedBroken.body },
      realBroken,
    );
    await faulty.close();
  },
);

s(
  "failNext(n, { operation }): only requests reaching that operation fail; the others pass and do not use up the count",
  async () => {
    const t = await testStore({ pets: 1 });
    t.failNext(1, { status: 503, operation: "createPet" });
    assert.is((await t.request("GET", "/v1/pets")).status, 200);
    assert.is((await t.request("GET", "/v1/pets/1")).status, 200);
    assert.is(
      (await t.request("POST", "/v1/pets", { body: { name: "", categoryId: 1 } })).status,
      400,
      "input checks first",
    );
    const failed = await t.request("POST", "/v1/pets", { body: { name: "Tom", categoryId: 1 } });
    assert.is(failed.status, 503);
    assert.equal((await t.store.listPets()).pets.length, 1, "the failed create stored nothing");
    assert.is((await t.request("POST", "/v1/pets", { body: { name: "Tom", categoryId: 1 } })).status, 201);
    t.failNext(1, { status: 500, operation: "getPet" });
    assert.is((await t.request("GET", "/v1/pets")).status, 200);
    assert.is((await t.request("GET", "/v1/pets/99")).status, 500, "a lookup of a missing pet reaches the operation");
  },
);

s("failNext: n, status and operation are checked (TypeError); reset() cancels pending failures", async () => {
  const t = await testStore();
  for (const [n, options] of [
    [0, { status: 503 }],
    [1.5, { status: 503 }],
    [1, { status: 404 }],
    [1, { status: 503, operation: "deletePet" }],
    [1, undefined],
  ] as const) {
    assert.throws(() => t.failNext(n, options as never), TypeError, JSON.stringify([n, options]));
  }
  t.failNext(3, { status: 503 });
  await t.reset();
  assert.is((await t.request("GET", "/v1/pets")).status, 200);
});

s(
  "delay(ms): every answer waits ms (a client with a shorter time-out gives up); delay(0) stops it; reset() restores delayMs",
  async () => {
    const t = await server({ pets: 1 });
    t.delay(400);
    const gaveUp = await fetch(`${t.url}/pets`, {
      headers: { authorization: `Bearer ${t.key}` },
      signal: AbortSignal.timeout(50),
    }).then(
      () => false,
      (e: Error) => e.name === "TimeoutError",
    );
    assert.ok(gaveUp, "the client's 50 ms time-out fired first");
    const started = performance.now();
    assert.is((await get(t, "/pets")).status, 200);
    assert.ok(performance.now() - started >= 390, "the answer came after the delay");
    t.delay(0);
    assert.is((await get(t, "/pets", {})).status, 200);
    assert.throws(() => t.delay(-1), TypeError);

    const slow = await testStore({ delayMs: 100 });
    slow.delay(0);
    await slow.reset();
    const from = performance.now();
    await slow.request("GET", "/v1/pets");
    assert.ok(performance.now() - from >= 95, "back to delayMs after reset()");
  },
);

s(
  "createTestStore: request() sends objects as JSON with the key, and resolves { status, headers, body, json }",
  async () => {
    const t = await testStore({ pets: 2 });
    const created = await t.request("POST", "/v1/pets", { body: { name: "Tom", categoryId: 2 } });
    assert.is(created.status, 201);
    assert.is(created.headers.location, "/v1/pets/3");
    assert.is(created.body, '{"id":3,"name":"Tom","categoryId":2,"status":"available"}');
    assert.equal(created.json, { id: 3, name: "Tom", categoryId: 2, status: "available" });
    const page = await t.request("GET", "/v1/pets?limit=1");
    assert.equal(page.json, [{ id: 1, name: "pet-1", categoryId: 1, status: "available" }]);
    assert.match(page.headers.link ?? "", /rel="next"/);
    const head = await t.request("HEAD", "/v1/pets");
    assert.is(head.body, "");
    assert.is(head.json, undefined);
    const text = await t.request("POST", "/v1/pets", {
      body: "{not json",
      headers: { "content-type": "application/json" },
    });
    assert.is((text.json as { code: string }).code, "malformed_json");
    const anonymous = await t.request("GET", "/v1/pets", { headers: { authorization: undefined } });
    assert.is(anonymous.status, 401);
    assert.is(anonymous.headers["www-authenticate"], 'Bearer realm="petstore"');
    const wrong = await t.request("GET", "/v1/pets", { headers: { Authorization: "Bearer nope" } });
    assert.is(wrong.status, 401);
  },
);

s("createTestStore: request() rejects a relative path with a TypeError", async () => {
  const t = await testStore();
  const error = await t.request("GET", "v1/pets").then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.instance(error, TypeError);
});

s("requestIds: 'sequential' gives req-1, req-2… (again from 1 after reset); a client's own id is echoed", async () => {
  const t = await testStore({ requestIds: "sequential" });
  assert.is((await t.request("GET", "/v1/pets")).headers["x-request-id"], "req-1");
  assert.is((await t.request("GET", "/v1/nowhere")).headers["x-request-id"], "req-2");
  assert.is(
    (await t.request("GET", "/v1/pets", { headers: { "X-Request-Id": "mine" } })).headers["x-request-id"],
    "mine",
  );
  await t.reset();
  assert.is((await t.request("GET", "/v1/pets")).headers["x-request-id"], "req-1");
  const random = await testStore();
  assert.match((await random.request("GET", "/v1/pets")).headers["x-request-id"] ?? "", /^[0-9a-f-]{36}$/);
});

s("rules: a test store takes the application's rules, as createPetStore does", async () => {
  const t = await testStore({
    rules: {
      beforeCreate: (pet) => {
        if (pet.categoryId > 3) throw new RuleViolation("unknown_category", "Not ours.");
      },
    },
  });
  const refused = await t.request("POST", "/v1/pets", { body: { name: "Rex", categoryId: 9 } });
  assert.equal(refused.json, { code: "unknown_category", message: "Not ours.", status: 422 });
});

s("options: an unknown option, a bad pets value, key or delayMs is a TypeError", async () => {
  for (const options of [
    { failNext: 1 },
    { pets: -1 },
    { pets: "" }, // a string is an export file's path (issue 46): an empty one names none
    { pets: true },
    { key: "" },
    { delayMs: -5 },
    { requestIds: "seq" },
  ]) {
    const error = await createTestStore(options as never).then(
      (t) => t.close(),
      (e: unknown) => e,
    );
    assert.instance(error, TypeError, JSON.stringify(options));
  }
});

s(
  "no switch anywhere else: createPetStore refuses fault options, and headers or query parameters of a request turn nothing on",
  async () => {
    for (const option of ["failNext", "delay", "faults", "testing"]) {
      assert.throws(() => createPetStore({ auth: ["k"], [option]: 1 } as never), TypeError);
    }
    const t = await server({ pets: 1 });
    for (const headers of <Record<string, string>[]>[
      { "x-fail": "503" },
      { "x-petstore-fail-next": "1" },
      { "x-delay": "1000" },
      { prefer: "status=503" },
    ]) {
      assert.is((await get(t, "/pets", headers)).status, 200);
    }
    assert.is((await get(t, "/pets?fail=503&delay=1000&failNext=1")).status, 200);
    // Only the test kit knows about injected faults: the core and the standalone server never import it.
    const folders = ["lib", "lib/storage", "adapters", "server"];
    const files = folders.flatMap((folder) =>
      readdirSync(folder)
        .filter((f) => f.endsWith(".ts"))
        .map((f) => `${folder}/${f}`),
    );
    assert.ok(files.includes("server/start.ts") && files.includes("lib/handler.ts"), "the code's files are read");
    for (const file of files) assert.not.match(readFileSync(file, "utf8"), /from "[^"]*testing\/|failNext/, file);
  },
);

s("storage: a PetStorage given is used (and closed by close()); reset() needs a storage with clear()", async () => {
  let closed = false;
  const real = memoryStorage();
  const close = async () => {
    closed = true;
  };
  const t = await createTestStore({ storage: { ...real, close }, pets: 1 });
  assert.equal(await real.get(1), { id: 1, name: "pet-1", categoryId: 1, status: "available" });
  await t.close();
  assert.ok(closed);
  const { clear: _clear, ...withoutClear } = memoryStorage();
  const u = await testStore({ storage: withoutClear as PetStorage });
  const error = await u.reset().then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.instance(error, TypeError);
  assert.match(String(error), /clear\(\)/);
});

for (const backend of backends("test kit reset()", { memory: false })) {
  s(
    `reset() on ${backend.name}: removes only the test server's own namespace, seeds again, ids start at 1`,
    async () => {
      const ns = `${RUN}kit`;
      const neighbourNs = `${RUN}kit_n`;
      cleanups.push(() => backend.cleanup([ns, neighbourNs]));
      const neighbour = await backend.open(neighbourNs);
      await neighbour.create({ name: "theirs", categoryId: 1, status: "available" });
      const t = await server({ storage: backend.spec(ns), pets: 2 });
      assert.is(((await (await get(t, "/pets")).json()) as unknown[]).length, 2);
      await t.store.createPet({ name: "extra", categoryId: 1 });
      await t.reset();
      assert.equal(await (await get(t, "/pets")).json(), [
        { id: 1, name: "pet-1", categoryId: 1, status: "available" },
        { id: 2, name: "pet-2", categoryId: 1, status: "available" },
      ]);
      assert.equal(
        (await neighbour.list({ after: 0, limit: 10 })).map((p) => p.name),
        ["theirs"],
      );
      await neighbour.close();
    },
  );
}

s(
  "createTestStore: an Idempotency-Key replays; reset() removes idempotency records too; failNext counts keyed creates",
  async () => {
    const t = await testStore();
    const keyed = { headers: { "idempotency-key": "order-1" }, body: { name: "Rex", categoryId: 1 } };
    const first = await t.request("POST", "/v1/pets", keyed);
    assert.is(first.status, 201);
    const again = await t.request("POST", "/v1/pets", keyed);
    assert.is(again.headers["idempotent-replayed"], "true");
    assert.is(again.body, first.body);
    await t.reset();
    const afterReset = await t.request("POST", "/v1/pets", keyed);
    assert.is(afterReset.status, 201);
    assert.is(afterReset.headers["idempotent-replayed"], undefined, "the key is new again after reset()");
    t.failNext(1, { status: 503, operation: "createPet" });
    const failed = await t.request("POST", "/v1/pets", { ...keyed, headers: { "idempotency-key": "order-2" } });
    assert.is(failed.status, 503);
    const retried = await t.request("POST", "/v1/pets", { ...keyed, headers: { "idempotency-key": "order-2" } });
    assert.is(retried.status, 201);
    assert.is(retried.headers["idempotent-replayed"], undefined, "the failed attempt stored nothing");
  },
);

s.run();
