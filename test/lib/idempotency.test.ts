/**
 * Idempotent creates on `handle()` and in process, rule by rule (contract 1.1, "Idempotent
 * creates"): the key's format, its place in the order of checks, its scope, the fingerprint,
 * replays, 422, 409 with Retry-After, retention by an injected clock, and the in-process form.
 */
import { createHash } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { memoryStorage } from "../../lib/entries/storage.ts";
import { fingerprintOf, parseIdempotencyKey, scopeOf } from "../../lib/idempotency.ts";
import type { PetStoreResponse } from "../../lib/index.ts";
import { createPetStore, isPetStoreError, RuleViolation } from "../../lib/index.ts";
import type { CreateOnceResult, IdempotencyRecord, PetData } from "../../lib/storage/port.ts";
import { call, errorOf, json, KEY, makeStore } from "../support/helpers.ts";

const UUID = "8e03978e-40d5-43e8-bc93-6894a57f9324";
const rex = { name: "Rex", categoryId: 1 };

function post(
  store: ReturnType<typeof makeStore>,
  key: string | string[] | undefined,
  body: unknown = rex,
  headers: Record<string, string> = {},
): Promise<PetStoreResponse> {
  return call(store, "POST", "/v1/pets", {
    headers: { ...(key === undefined ? {} : { "idempotency-key": key }), ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function pets(store: ReturnType<typeof makeStore>): Promise<unknown[]> {
  return (await store.listPets({ limit: 100 })).pets;
}

test("idempotency: a first use creates the pet (201, Location), without Idempotent-Replayed", async () => {
  const store = makeStore();
  const r = await post(store, UUID);
  assert.is(r.status, 201);
  assert.is(r.headers.location, "/v1/pets/1");
  assert.is(r.headers["idempotent-replayed"], undefined);
  assert.equal(json(r), { id: 1, name: "Rex", categoryId: 1, status: "available" });
});

test("idempotency: the same key and NewPet again answers 201 with the same body and Location, plus Idempotent-Replayed: true, storing nothing", async () => {
  const store = makeStore();
  const first = await post(store, UUID);
  const again = await post(store, UUID);
  assert.is(again.status, 201);
  assert.is(again.body, first.body);
  assert.is(again.headers.location, first.headers.location);
  assert.is(again.headers["idempotent-replayed"], "true");
  assert.is(again.headers["content-type"], "application/json; charset=utf-8");
  assert.is((await pets(store)).length, 1);
});

test("idempotency: a structured-field string and the same characters unquoted are the same key", async () => {
  const store = makeStore();
  await post(store, `"${UUID}"`);
  const r = await post(store, UUID);
  assert.is(r.headers["idempotent-replayed"], "true");
  assert.is((await pets(store)).length, 1);
});

test("idempotency: the fingerprint is the NewPet with defaults in canonical order (omitted status = available, any key order)", async () => {
  const store = makeStore();
  await post(store, "k", '{"name":"a","categoryId":1}');
  const r = await post(store, "k", '{"categoryId":1,"name":"a","status":"available"}');
  assert.is(r.status, 201);
  assert.is(r.headers["idempotent-replayed"], "true");
  const canonical = createHash("sha256").update('{"name":"a","categoryId":1,"status":"available"}').digest("hex");
  assert.is(fingerprintOf({ status: "available", categoryId: 1, name: "a" } as PetData), canonical);
});

test("idempotency: the same key with another NewPet is 422 idempotency_key_reused, whose message reveals nothing of the first request", async () => {
  const store = makeStore();
  await post(store, "k", { name: "Secret name", categoryId: 7 });
  const r = await post(store, "k", { name: "Other", categoryId: 7 });
  assert.is(r.status, 422);
  const error = errorOf(r);
  assert.is(error.code, "idempotency_key_reused");
  assert.match(error.message, /already used for a different request/);
  assert.not.match(r.body, /Secret|"id"/);
  assert.is((await pets(store)).length, 1);
});

test("idempotency: another caller's identical key is another key (the scope is the bearer token)", async () => {
  const store = createPetStore({ auth: [KEY, "other-key"], onError: () => {} });
  const a = await post(store, "k");
  const b = await post(store, "k", rex, { authorization: "Bearer other-key" });
  assert.is(a.status, 201);
  assert.is(b.status, 201);
  assert.is(b.headers["idempotent-replayed"], undefined);
  assert.is.not(b.headers.location, a.headers.location);
  // The scope is a digest: never the token itself.
  assert.is.not(scopeOf(KEY), KEY);
  assert.not.ok(scopeOf(KEY).includes(KEY));
});

test("scopeOf: each token its own SHA-256 digest, whatever token came before (the last one is kept)", () => {
  const digest = (token: string) => createHash("sha256").update(token).digest("base64url");
  for (const token of ["a", "b", "a", "a", "", "b"]) assert.is(scopeOf(token), digest(token));
});

const MALFORMED: [string, string | string[]][] = [
  ["empty", ""],
  ["quotes only", '""'],
  ["a space inside", "a b"],
  ["a double quote inside", 'a"b'],
  ["a backslash", "a\\b"],
  ["a control character", "a\tb"],
  ["non-ASCII", "clé"],
  ["unbalanced quote", '"abc'],
  ["256 characters", "x".repeat(256)],
  ["given twice (two values)", ["a", "b"]],
  ["given twice (joined by Node)", "a, b"],
];

for (const [what, value] of MALFORMED) {
  test(`idempotency: a key that is ${what} is 400 invalid_idempotency_key and stores nothing`, async () => {
    const store = makeStore();
    const r = await post(store, value);
    assert.is(r.status, 400);
    assert.is(errorOf(r).code, "invalid_idempotency_key");
    assert.is((await pets(store)).length, 0);
  });
}

test("idempotency: keys of 1 and 255 characters from ! to ~ are accepted", async () => {
  const store = makeStore();
  const all = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i))
    .filter((c) => c !== '"' && c !== "\\")
    .join("");
  assert.is((await post(store, "!")).status, 201);
  assert.is((await post(store, all)).status, 201);
  assert.is((await post(store, "~".repeat(255))).status, 201);
  assert.is(parseIdempotencyKey(` "${UUID}" `), UUID);
});

test("idempotency: the key is checked after auth: a bad key without a valid token is 401", async () => {
  const store = makeStore();
  const r = await call(store, "POST", "/v1/pets", { auth: false, headers: { "idempotency-key": "" }, body: "{" });
  assert.is(r.status, 401);
});

test("idempotency: the key is checked before the content type, the size and the body (400 before 415, 413, 400 invalid_body)", async () => {
  const store = makeStore({ maxBodyBytes: 100 });
  const wrongType = await post(store, "a b", rex, { "content-type": "text/plain" });
  assert.is(errorOf(wrongType).code, "invalid_idempotency_key");
  const tooLarge = await post(store, "a b", rex, { "content-length": "1000" });
  assert.is(errorOf(tooLarge).code, "invalid_idempotency_key");
  const badBody = await post(store, "a b", "{");
  assert.is(errorOf(badBody).code, "invalid_idempotency_key");
  // A valid key does not excuse a bad body.
  const invalid = await post(store, "k", { name: "" });
  assert.is(errorOf(invalid).code, "invalid_body");
  const again = await post(store, "k", rex);
  assert.is(again.status, 201, "a refused body used no key");
  assert.is(again.headers["idempotent-replayed"], undefined);
});

test("idempotency: without the header, POST answers byte for byte as before (no Idempotent-Replayed, two pets)", async () => {
  const store = makeStore();
  const a = await post(store, undefined);
  const b = await post(store, undefined);
  assert.equal(Object.keys(a.headers).sort(), [
    "cache-control",
    "content-length",
    "content-type",
    "location",
    "x-content-type-options",
    "x-request-id",
  ]);
  assert.is.not(a.headers.location, b.headers.location);
});

test("idempotency: 50 concurrent requests with one key make one pet; every answer is that pet's 201 or 409 with Retry-After: 1", async () => {
  const store = makeStore();
  const answers = await Promise.all(Array.from({ length: 50 }, () => post(store, UUID)));
  const created = answers.filter((r) => r.status === 201 && r.headers["idempotent-replayed"] === undefined);
  assert.is(created.length, 1);
  for (const r of answers) {
    if (r.status === 409) assert.is(r.headers["retry-after"], "1");
    else assert.is(r.body, created[0]?.body);
  }
  assert.is((await pets(store)).length, 1);
});

/** A memory storage whose createOnce answers `in_use` while `busy` is true. */
function busyStorage() {
  const inner = memoryStorage();
  const state = { busy: true };
  const storage: PetStorage = {
    ...inner,
    createOnce(pet: PetData, record: IdempotencyRecord): CreateOnceResult | Promise<CreateOnceResult> {
      if (state.busy) return { conflict: "in_use" };
      return (inner.createOnce as NonNullable<PetStorage["createOnce"]>)(pet, record);
    },
  };
  return { storage, state };
}

test("idempotency: a key still being written is 409 idempotency_key_in_use with Retry-After: 1", async () => {
  const { storage, state } = busyStorage();
  const store = makeStore({ storage });
  const r = await post(store, "k");
  assert.is(r.status, 409);
  assert.is(r.headers["retry-after"], "1");
  assert.is(errorOf(r).code, "idempotency_key_in_use");
  state.busy = false;
  assert.is((await post(store, "k")).status, 201);
});

test("idempotency: a first attempt answered 503 whose write landed is replayed by the retry, storing nothing new", async () => {
  const inner = memoryStorage();
  let slow = true;
  const storage: PetStorage = {
    ...inner,
    inProcess: false,
    async createOnce(pet, record) {
      const result = await (inner.createOnce as NonNullable<PetStorage["createOnce"]>)(pet, record);
      if (slow) await new Promise((resolve) => setTimeout(resolve, 200)); // written, then too late
      return result;
    },
  };
  const store = makeStore({ storage, operationTimeoutMs: 20 });
  const first = await post(store, "k");
  assert.is(first.status, 503);
  slow = false;
  const retry = await post(store, "k");
  assert.is(retry.status, 201);
  assert.is(retry.headers["idempotent-replayed"], "true");
  assert.is(retry.headers.location, "/v1/pets/1");
  assert.is((await store.listPets()).pets.length, 1);
});

test("idempotency: after the retention (idempotencyTtlMs, by the store's clock) the key is new again", async () => {
  let now = Date.UTC(2026, 10, 26);
  const store = makeStore({ idempotencyTtlMs: 60_000, clock: () => now });
  await post(store, "k");
  now += 59_999;
  assert.is((await post(store, "k")).headers["idempotent-replayed"], "true");
  now += 1;
  const fresh = await post(store, "k", { name: "Mia", categoryId: 2 });
  assert.is(fresh.status, 201);
  assert.is(fresh.headers["idempotent-replayed"], undefined);
  assert.is(fresh.headers.location, "/v1/pets/2");
});

test("idempotency: retention is 24 hours by default", async () => {
  let now = Date.UTC(2026, 10, 26);
  const store = makeStore({ clock: () => now });
  await post(store, "k");
  now += 24 * 3_600_000 - 1;
  assert.is((await post(store, "k")).headers["idempotent-replayed"], "true");
  now += 1;
  assert.is((await post(store, "k")).headers["idempotent-replayed"], undefined);
});

test("idempotency: idempotencyTtlMs and clock are checked by createPetStore", () => {
  assert.throws(() => makeStore({ idempotencyTtlMs: 0 }), /idempotencyTtlMs/);
  assert.throws(() => makeStore({ idempotencyTtlMs: 1.5 }), /idempotencyTtlMs/);
  assert.throws(() => makeStore({ clock: 5 as never }), /clock/);
});

test("idempotency: a storage without createOnce answers a keyed create 500 internal_error, reported to onError", async () => {
  const inner = memoryStorage();
  const { createOnce: _, ...rest } = inner;
  const errors: unknown[] = [];
  const store = createPetStore({ auth: [KEY], storage: rest as PetStorage, onError: (e) => errors.push(e) });
  const r = await post(store, "k");
  assert.is(r.status, 500);
  assert.is(errors.length, 1);
  assert.match(String((errors[0] as Error).cause), /createOnce/);
  assert.is((await post(store, undefined)).status, 201, "creates without a key still work");
});

test("createPet in process: { idempotencyKey } resolves { pet, replayed } with the same semantics", async () => {
  const store = makeStore();
  const first = await store.createPet(rex, { idempotencyKey: UUID });
  assert.equal(first, { pet: { id: 1, name: "Rex", categoryId: 1, status: "available" }, replayed: false });
  const again = await store.createPet({ categoryId: 1, name: "Rex", status: "available" }, { idempotencyKey: UUID });
  assert.equal(again, { pet: first.pet, replayed: true });
  try {
    await store.createPet({ name: "Mia", categoryId: 1 }, { idempotencyKey: UUID });
    assert.unreachable();
  } catch (error) {
    assert.ok(isPetStoreError(error, "idempotency_key_reused"));
    assert.is(error.status, 422);
  }
  // The plain form is unchanged: a Pet, a new one each time.
  assert.equal(await store.createPet(rex), { id: 2, name: "Rex", categoryId: 1, status: "available" });
});

test("createPet in process: a malformed key or scope rejects with invalid_idempotency_key, before the body is checked", async () => {
  const store = makeStore();
  for (const options of [
    { idempotencyKey: "" },
    { idempotencyKey: "a b" },
    { idempotencyKey: 5 },
    { idempotencyKey: "k", scope: 5 },
    { idempotencyKey: "k", scope: "x".repeat(256) },
    { idempotencyKey: "k", scope: "tenant\0a" },
  ]) {
    try {
      await store.createPet({ name: "" } as never, options as never);
      assert.unreachable();
    } catch (error) {
      assert.ok(isPetStoreError(error, "invalid_idempotency_key"), String(error));
    }
  }
});

test("createPet in process: the scope separates callers; scopeOf(token) shares keys with that HTTP caller", async () => {
  const store = makeStore();
  const http = await post(store, "k");
  const own = await store.createPet(rex, { idempotencyKey: "k" });
  assert.is(own.replayed, false, "the in-process default scope is its own");
  const shared = await store.createPet(rex, { idempotencyKey: "k", scope: scopeOf(KEY) });
  assert.equal(shared, { pet: json(http), replayed: true });
  const other = await store.createPet(rex, { idempotencyKey: "k", scope: "tenant-7" });
  assert.is(other.replayed, false);
  assert.is((await pets(store)).length, 3);
});

test("idempotency with business rules: a replay does not run afterCreate again; a refused create stores nothing and leaves the key unused", async () => {
  const after: number[] = [];
  let refuse = true;
  const store = makeStore({
    rules: {
      beforeCreate: () => {
        if (refuse) throw new RuleViolation("not_today", "No pets today.");
      },
      afterCreate: (pet) => {
        after.push(pet.id);
      },
    },
  });
  const refused = await post(store, "k");
  assert.is(refused.status, 422);
  assert.is(errorOf(refused).code, "not_today");
  refuse = false;
  const first = await post(store, "k");
  assert.is(first.status, 201);
  assert.is(first.headers["idempotent-replayed"], undefined, "the refused request used no key");
  const again = await post(store, "k");
  assert.is(again.headers["idempotent-replayed"], "true");
  const inProcess = await store.createPet(rex, { idempotencyKey: "k", scope: scopeOf(KEY) });
  assert.is(inProcess.replayed, true);
  assert.equal(after, [1], "afterCreate ran once, for the creation");
});

test.run();
