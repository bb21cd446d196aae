/**
 * `petstore-lib/client` against a test server: the store's operations over HTTP, pages read from
 * `Link`, every pet through `pets()`, the answer's request id on errors, a rule's refusal, the
 * deprecation told once, options checked, and what is refused before any request is sent.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createPetStoreClient, isPetStoreError, PetStoreError, UNEXPECTED_ANSWER } from "../../client/index.ts";
import type { Operations } from "../../lib/index.ts";
import { isRuleViolation, RuleViolation } from "../../lib/index.ts";
import type { TestServer } from "../../testing/index.ts";
import { startTestServer } from "../../testing/index.ts";

let server: TestServer;
test.before(async () => {
  server = await startTestServer({
    pets: 25,
    rules: {
      beforeCreate(pet) {
        if (pet.categoryId === 99) throw new RuleViolation("unknown_category", "Not one of ours.", { status: 409 });
      },
    },
  });
});
test.before.each(() => server.reset());
test.after(() => server.close());

const client = (options: Partial<Parameters<typeof createPetStoreClient>[0]> = {}) =>
  createPetStoreClient({ baseUrl: server.url, key: server.key, retry: { baseDelayMs: 1 }, ...options });

test("client: it is the store's own Operations type (assignable, no look-alike)", () => {
  const ops: Operations = client();
  assert.type(ops.listPets, "function");
});

test("listPets: one page, nextCursor read from Link, the effective limit and status", async () => {
  const page = await client().listPets({ limit: 10 });
  assert.equal(
    page.pets.map((p) => p.id),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );
  assert.type(page.nextCursor, "string");
  assert.is(page.limit, 10);
  const next = await client().listPets({ limit: 10, cursor: page.nextCursor });
  assert.is(next.pets[0]?.id, 11);
  const last = await client().listPets({ limit: 10, cursor: next.nextCursor });
  assert.is(last.pets.length, 5);
  assert.is(last.nextCursor, undefined, "the last page has no next link");
  const whole = await client().listPets();
  assert.is(whole.limit, 20, "the API's default page size");
  assert.is(whole.pets.length, 20);
});

test("pets(): every pet once, in id order, following Link page after page (the journal shows each page)", async () => {
  for (let i = 0; i < 3; i++) await server.store.createPet({ name: `sold-${i}`, categoryId: 1, status: "sold" });
  const ids: number[] = [];
  for await (const pet of client().pets({ limit: 7 })) ids.push(pet.id);
  assert.equal(
    ids,
    Array.from({ length: 28 }, (_, i) => i + 1),
  );
  assert.is(server.requests().filter((r) => r.path === "/v1/pets").length, 4, "28 pets in pages of 7");
  const sold: string[] = [];
  for await (const pet of client().pets({ status: "sold", limit: 2 })) sold.push(pet.name);
  assert.equal(sold, ["sold-0", "sold-1", "sold-2"]);
});

test("createPet: sends a new UUID as Idempotency-Key per call, resolves the Pet", async () => {
  const pets = client();
  const rex = await pets.createPet({ name: "Rex", categoryId: 2 });
  assert.equal(rex, { id: 26, name: "Rex", categoryId: 2, status: "available" });
  await pets.createPet({ name: "Rex", categoryId: 2 });
  const keys = server.requests().map((r) => r.idempotencyKey ?? "");
  assert.is(keys.length, 2);
  for (const key of keys) assert.match(key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.is.not(keys[0], keys[1], "a new key per call: two calls are two pets");
});

test("createPet with idempotencyKey: { pet, replayed }, as the store answers it; the key is sent as given", async () => {
  const pets = client();
  const first = await pets.createPet({ name: "Rex", categoryId: 1 }, { idempotencyKey: "order-1234" });
  const again = await pets.createPet({ name: "Rex", categoryId: 1 }, { idempotencyKey: "order-1234" });
  assert.equal(first, { pet: { id: 26, name: "Rex", categoryId: 1, status: "available" }, replayed: false });
  assert.equal(again, { pet: first.pet, replayed: true });
  assert.equal(
    server.requests().map((r) => [r.idempotencyKey, r.replayed]),
    [
      ["order-1234", false],
      ["order-1234", true],
    ],
  );
  const reused = await pets.createPet({ name: "Max", categoryId: 1 }, { idempotencyKey: "order-1234" }).catch((e) => e);
  assert.ok(isPetStoreError(reused, "idempotency_key_reused"));
  assert.is(reused.status, 422);
});

test("createPet: requestId is sent as X-Request-Id; scope cannot be chosen over HTTP (TypeError)", async () => {
  await client().createPet({ name: "Rex", categoryId: 1 }, { requestId: "checkout-7" });
  assert.is(server.requests()[0]?.requestId, "checkout-7");
  const error = await client()
    .createPet({ name: "Rex", categoryId: 1 }, { scope: "tenant-a" })
    .catch((e) => e);
  assert.instance(error, TypeError);
});

test("errors: a PetStoreError with the Error body's code, status, message, details, and the answer's request id", async () => {
  const error = await client()
    .createPet({ name: "", categoryId: 1, colour: "red" } as never)
    .catch((e) => e);
  assert.instance(error, PetStoreError);
  assert.is(error.code, "invalid_body");
  assert.is(error.status, 400);
  assert.ok(Array.isArray(error.details) && error.details.some((d: { path: string }) => d.path === "colour"));
  const journal = server.requests();
  assert.is(error.requestId, journal[journal.length - 1]?.requestId);
  assert.match(error.requestId, /^[0-9a-f-]{36}$/);
  const missing = await client()
    .getPet(12345)
    .catch((e) => e);
  assert.ok(isPetStoreError(missing, "pet_not_found"));
  assert.is(missing.status, 404);
});

test("errors: a business rule's refusal keeps its code and status, and isRuleViolation() is true", async () => {
  const error = await client()
    .createPet({ name: "Rex", categoryId: 99 })
    .catch((e) => e);
  assert.instance(error, PetStoreError);
  assert.is(error.code, "unknown_category");
  assert.is(error.status, 409);
  assert.is(error.message, "Not one of ours.");
  assert.ok(isRuleViolation(error));
  assert.is(server.requests().length, 1, "a rule's 409 is not retried (only idempotency_key_in_use is)");
});

test("errors: an answer without an Error body (a proxy's page) is unexpected_answer with the HTTP status", async () => {
  const page = async () => new Response("<h1>Bad gateway</h1>", { status: 502, headers: { "x-request-id": "edge-1" } });
  const error = await client({ fetch: page })
    .listPets()
    .catch((e) => e);
  assert.instance(error, PetStoreError);
  assert.is(error.code, UNEXPECTED_ANSWER);
  assert.is(error.status, 502);
  assert.is(error.requestId, "edge-1");
  const notAPage = async () => new Response('{"pets":[]}', { status: 200 });
  const shape = await client({ fetch: notAPage })
    .listPets()
    .catch((e) => e);
  assert.is(shape.code, UNEXPECTED_ANSWER);
});

test("getPet: reads a pet by number or decimal string; Deprecation and Sunset are told once through onDeprecation", async () => {
  const notices: unknown[] = [];
  const pets = client({ onDeprecation: (notice) => notices.push(notice) });
  assert.equal(await pets.getPet(3), { id: 3, name: "pet-3", categoryId: 1, status: "available" });
  assert.is((await pets.getPet("4")).id, 4);
  await pets.getPet(9999).catch(() => {});
  assert.equal(notices, [
    {
      operation: "getPet",
      deprecatedAt: new Date("2026-11-25T00:00:00Z"),
      sunsetAt: new Date("2030-12-05T00:00:00Z"),
      successor: `${server.url}/pets`,
    },
  ]);
  const throwing = client({
    onDeprecation: () => {
      throw new Error("a callback's own failure");
    },
  });
  assert.is((await throwing.getPet(1)).id, 1, "what onDeprecation throws never changes the answer");
});

test("local checks: what the store refuses before storage is refused without a request, with the same error", async () => {
  const pets = client();
  for (const id of ["", "../pets", "1.5", "abc", 1.5, -1, Number.NaN]) {
    const error = await pets.getPet(id).catch((e) => e);
    assert.ok(isPetStoreError(error, "invalid_pet_id"), `getPet(${JSON.stringify(id)})`);
  }
  for (const query of [{ limit: "5" }, { colour: "red" }, { status: 1 }]) {
    const error = await pets.listPets(query as never).catch((e) => e);
    assert.ok(isPetStoreError(error, "invalid_query"), JSON.stringify(query));
  }
  for (const key of ["", "a b", 'a"b', "é", "x".repeat(256)]) {
    const error = await pets.createPet({ name: "Rex", categoryId: 1 }, { idempotencyKey: key }).catch((e) => e);
    assert.ok(isPetStoreError(error, "invalid_idempotency_key"), JSON.stringify(key));
  }
  const body = await pets.createPet({ name: "Rex", categoryId: 10n } as never).catch((e) => e);
  assert.ok(isPetStoreError(body, "invalid_body"));
  assert.equal(server.requests(), [], "none of these was sent");
  const range = await pets.getPet(0).catch((e) => e);
  assert.ok(isPetStoreError(range, "invalid_pet_id"), "the server's own check for the rest");
});

test("options: each mistake is a TypeError naming the option, at creation", () => {
  const base = { baseUrl: server.url, key: server.key };
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ ...base, baseUrl: "ftp://x/v1" }, /baseUrl/],
    [{ ...base, baseUrl: "not a url" }, /baseUrl/],
    [{ ...base, baseUrl: `${server.url}?a=1` }, /baseUrl/],
    [{ ...base, key: "" }, /key/],
    [{ ...base, key: "a\nb" }, /key/],
    [{ ...base, fetch: "fetch" }, /fetch/],
    [{ ...base, retry: { attempts: 0 } }, /retry\.attempts/],
    [{ ...base, retry: { tries: 3 } }, /unknown option "tries"/],
    [{ ...base, retry: true }, /retry/],
    [{ ...base, timeoutMs: 0 }, /timeoutMs/],
    [{ ...base, onDeprecation: 1 }, /onDeprecation/],
    [{ ...base, baseURL: "x" }, /unknown option "baseURL"/],
  ];
  for (const [options, message] of bad) {
    assert.throws(
      () => createPetStoreClient(options as never),
      (e: Error) => e instanceof TypeError && message.test(e.message),
    );
  }
  const trailing = createPetStoreClient({ ...base, baseUrl: `${server.url}/` });
  assert.ok(trailing, "a trailing slash is fine");
});

test.run();
