/**
 * Business rules of the embedding application (`createPetStore({ rules })`, lib/rules.ts):
 * `beforeCreate` refuses with a `RuleViolation` (its code and status the Error answer; in process
 * the rejection itself), anything else it throws is a 500 reported to onError, `afterCreate` runs
 * once per stored pet and the answer waits for it (bounded), and the served OpenAPI document lists
 * the declared codes.
 */
import { createHash } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { tokenId } from "../../lib/auth/principal.ts";
import { buildOpenApi } from "../../lib/entries/openapi.ts";
import type { Pet } from "../../lib/entries/schemas.ts";
import type { PetStoreRules, RuleContext } from "../../lib/index.ts";
import { createPetStore, isPetStoreError, PetStoreError, RuleViolation } from "../../lib/index.ts";
import { AUTH, call, errorOf, json, KEY, makeStore } from "../support/helpers.ts";
import { createResponseChecker } from "../support/openapi-validator.ts";

const OUR_CATEGORIES = new Set([1, 2, 3]);

/** A rule as an application writes it: categoryId must be one of its own categories. */
const categoryRule: PetStoreRules = {
  beforeCreate(pet) {
    if (!OUR_CATEGORIES.has(pet.categoryId)) {
      throw new RuleViolation("unknown_category", `categoryId ${pet.categoryId} is not one of our categories.`);
    }
  },
  codes: [{ code: "unknown_category", status: 422, description: "categoryId is not one of our categories." }],
};

const post = (store: ReturnType<typeof makeStore>, body: unknown, headers: Record<string, string> = {}) =>
  call(store, "POST", "/v1/pets", { body: JSON.stringify(body), headers });

test("RuleViolation: a PetStoreError with the rule's code and status (422 by default)", () => {
  const v = new RuleViolation("unknown_category", "Not ours.");
  assert.instance(v, PetStoreError);
  assert.instance(v, Error);
  assert.is(v.name, "RuleViolation");
  assert.is(v.code, "unknown_category");
  assert.is(v.status, 422);
  assert.is(v.message, "Not ours.");
  assert.equal(v.toJSON(), { code: "unknown_category", message: "Not ours.", status: 422 });
  for (const status of [400, 403, 409, 422] as const)
    assert.is(new RuleViolation("abc", "m", { status }).status, status);
});

test("RuleViolation: a code off the pattern, one of the table's codes, a status other than 400/403/409/422 or an empty message is a TypeError", () => {
  for (const code of ["ab", "Unknown", "1abc", "a-b-c", "x".repeat(65), "", "invalid_body", "storage_unavailable"]) {
    assert.throws(
      () => new RuleViolation(code, "m"),
      (e: unknown) => e instanceof TypeError && /code/.test(String(e)),
    );
  }
  for (const status of [200, 401, 404, 500, 503, 418, "422"]) {
    assert.throws(
      () => new RuleViolation("abc", "m", { status: status as 422 }),
      (e: unknown) => e instanceof TypeError && /status must be 400, 403, 409 or 422/.test(String(e)),
    );
  }
  assert.throws(() => new RuleViolation("abc", ""), TypeError);
  assert.throws(() => new RuleViolation("abc", undefined as never), TypeError);
});

test("createPetStore: rules that are not an object, an unknown rule, a rule that is not a function or a bad code declaration is a TypeError", () => {
  const bad: unknown[] = [
    null,
    [],
    "rules",
    { beforeCreat: () => {} },
    { beforeCreate: "yes" },
    { afterCreate: 1 },
    { codes: "unknown_category" },
    { codes: [{ code: "Bad", status: 422, description: "d" }] },
    { codes: [{ code: "not_found", status: 422, description: "d" }] },
    { codes: [{ code: "abc", status: 500, description: "d" }] },
    { codes: [{ code: "abc", status: 422 }] },
    {
      codes: [
        { code: "abc", status: 422, description: "d" },
        { code: "abc", status: 409, description: "e" },
      ],
    },
  ];
  for (const rules of bad) {
    assert.throws(
      () => createPetStore({ auth: [KEY], rules: rules as PetStoreRules }),
      (e: unknown) => e instanceof TypeError && /rule/.test(String(e)),
      JSON.stringify(rules),
    );
  }
});

test("beforeCreate: a RuleViolation is the Error answer (code, message, status), and the pet is not stored", async () => {
  const store = makeStore({ rules: categoryRule });
  const refused = await post(store, { name: "Rex", categoryId: 9 });
  assert.is(refused.status, 422);
  assert.equal(errorOf(refused), {
    code: "unknown_category",
    message: "categoryId 9 is not one of our categories.",
    status: 422,
  });
  assert.is(refused.headers["content-type"], "application/json; charset=utf-8");
  assert.is(refused.headers["cache-control"], "no-store");
  assert.is(refused.headers["retry-after"], undefined);
  assert.equal(json(await call(store, "GET", "/v1/pets")), []);
  const accepted = await post(store, { name: "Rex", categoryId: 2 });
  assert.is(accepted.status, 201);
  assert.equal(json(accepted), { id: 1, name: "Rex", categoryId: 2, status: "available" });
});

test("beforeCreate: in process, createPet rejects with the same RuleViolation, and nothing is stored", async () => {
  const violation = new RuleViolation("closed_for_today", "The shop is closed.", { status: 409 });
  const store = makeStore({
    rules: {
      beforeCreate: async () => {
        throw violation;
      },
    },
  });
  const error = await store.createPet({ name: "Rex", categoryId: 1 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.is(error, violation);
  assert.ok(isPetStoreError(error));
  assert.equal((await store.listPets()).pets, []);
});

test("beforeCreate: each of the statuses 400, 403, 409, 422 is the HTTP status of the answer", async () => {
  for (const status of [400, 403, 409, 422] as const) {
    const store = makeStore({
      rules: {
        beforeCreate: () => {
          throw new RuleViolation("refused_here", "No.", { status });
        },
      },
    });
    const answer = await post(store, { name: "Rex", categoryId: 1 });
    assert.is(answer.status, status);
    assert.equal(errorOf(answer), { code: "refused_here", message: "No.", status });
  }
});

test("beforeCreate: anything else it throws is a 500 internal_error reported to onError (HTTP and in process), with nothing stored", async () => {
  const reported: unknown[] = [];
  const secret = new Error("db password is hunter2");
  const store = makeStore({
    onError: (e) => reported.push(e),
    rules: {
      beforeCreate: () => {
        throw secret;
      },
    },
  });
  const answer = await post(store, { name: "Rex", categoryId: 1 });
  assert.is(answer.status, 500);
  assert.equal(errorOf(answer), { code: "internal_error", message: "An unexpected error occurred.", status: 500 });
  assert.not.match(answer.body, /hunter2/);
  assert.is(reported.length, 1);
  const error = await store.createPet({ name: "Rex", categoryId: 1 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(isPetStoreError(error, "internal_error"));
  assert.is(reported.length, 2, "the in-process failure is reported too");
  const causes = (e: unknown): unknown[] =>
    e instanceof Error && e.cause !== undefined ? [e.cause, ...causes(e.cause)] : [];
  assert.ok(causes(reported[0]).includes(secret), "the rule's own error is the cause, for logs");
  assert.equal((await store.listPets()).pets, []);
});

test("beforeCreate: runs after validation (an invalid body is 400 invalid_body without calling it) and after auth", async () => {
  let calls = 0;
  const store = makeStore({
    rules: {
      beforeCreate: () => {
        calls++;
      },
    },
  });
  assert.is((await post(store, { name: "", categoryId: 1 })).status, 400);
  assert.is((await post(store, { name: "Rex", categoryId: "1" })).status, 400);
  assert.is((await call(store, "POST", "/v1/pets", { auth: false, body: '{"name":"a","categoryId":1}' })).status, 401);
  assert.is((await call(store, "POST", "/v1/pets", { body: "{" })).status, 400);
  assert.is(calls, 0);
  assert.is((await post(store, { name: "Rex", categoryId: 1 })).status, 201);
  assert.is(calls, 1);
});

test("beforeCreate: sees the validated NewPet with status defaulted, as a frozen copy; what is stored is what was validated", async () => {
  const seen: unknown[] = [];
  const store = makeStore({
    rules: {
      beforeCreate: (pet) => {
        seen.push(pet);
        assert.ok(Object.isFrozen(pet));
      },
    },
  });
  await post(store, { categoryId: 2, name: "Rex" });
  assert.equal(seen, [{ name: "Rex", categoryId: 2, status: "available" }]);
  assert.equal(Object.keys(seen[0] as object), ["name", "categoryId", "status"]);
});

test("context: the request id of the answer, the caller's scope (SHA-256 of the token, base64url) and its principal, never the token", async () => {
  const contexts: RuleContext[] = [];
  const rules: PetStoreRules = {
    beforeCreate: (_pet, context) => {
      contexts.push(context);
    },
    afterCreate: (_pet, context) => {
      contexts.push(context);
    },
  };
  const store = makeStore({ rules });
  const answer = await post(store, { name: "Rex", categoryId: 1 }, { "x-request-id": "order-42" });
  assert.is(answer.status, 201);
  const scope = createHash("sha256").update(KEY).digest("base64url");
  const principal = { id: tokenId(KEY), scopes: ["pets:read", "pets:write"] };
  assert.equal(contexts, [
    { requestId: "order-42", scope, principal },
    { requestId: "order-42", scope, principal },
  ]);
  assert.not.ok(JSON.stringify(contexts).includes(KEY), "the token is nowhere in the context");

  contexts.length = 0;
  const generated = await post(store, { name: "Tom", categoryId: 1 });
  assert.is(contexts[0]?.requestId, generated.headers["x-request-id"], "a generated request id is the answer's");

  contexts.length = 0;
  await store.createPet({ name: "Kit", categoryId: 1 });
  assert.match(contexts[0]?.requestId ?? "", /^[0-9a-f-]{36}$/, "in process: a new request id");
  assert.is(contexts[0]?.scope, undefined, "in process: no scope unless given");
  contexts.length = 0;
  await store.createPet({ name: "Kit", categoryId: 1 }, { requestId: "job-7", scope: "tenant-a" });
  assert.equal(contexts[0], { requestId: "job-7", scope: "tenant-a" });
});

test("afterCreate: runs once per stored pet, with the stored pet, before the answer (its effects are visible at 201)", async () => {
  const log: Pet[] = [];
  const store = makeStore({
    rules: {
      ...categoryRule,
      afterCreate: async (pet) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        log.push(pet);
      },
    },
  });
  const answer = await post(store, { name: "Rex", categoryId: 1 });
  assert.is(answer.status, 201);
  assert.equal(log, [{ id: 1, name: "Rex", categoryId: 1, status: "available" }], "done when the 201 is seen");
  await post(store, { name: "Nope", categoryId: 9 }); // refused: not stored, so no afterCreate
  await store.createPet({ name: "Tom", categoryId: 2, status: "sold" });
  await post(store, { name: "", categoryId: 1 }); // invalid: not stored
  assert.equal(
    log.map((p) => p.id),
    [1, 2],
  );
});

test("afterCreate: what it throws or rejects is reported to onError and never changes the answer", async () => {
  for (const afterCreate of [
    () => {
      throw new Error("mail server down");
    },
    () => Promise.reject(new Error("mail server down")),
  ]) {
    const reported: unknown[] = [];
    const store = makeStore({ onError: (e) => reported.push(e), rules: { afterCreate } });
    const answer = await post(store, { name: "Rex", categoryId: 1 });
    assert.is(answer.status, 201);
    assert.equal(json(answer), { id: 1, name: "Rex", categoryId: 1, status: "available" });
    assert.is(reported.length, 1);
    assert.match(String((reported[0] as Error).message), /afterCreate/);
    assert.equal(await store.createPet({ name: "Tom", categoryId: 1 }), {
      id: 2,
      name: "Tom",
      categoryId: 1,
      status: "available",
    });
    assert.is(reported.length, 2);
  }
});

test("afterCreate: the answer waits at most operationTimeoutMs; the wait is reported, the answer is the 201", async () => {
  const reported: unknown[] = [];
  let finish: () => void = () => {};
  const store = makeStore({
    operationTimeoutMs: 50,
    onError: (e) => reported.push(e),
    rules: { afterCreate: () => new Promise<void>((resolve) => (finish = resolve)) },
  });
  const answer = await post(store, { name: "Rex", categoryId: 1 });
  assert.is(answer.status, 201);
  assert.is(reported.length, 1);
  assert.match(String((reported[0] as Error).message), /afterCreate took longer than 50 ms/);
  finish();
});

test("rules: a store without rules answers byte for byte as before (same body and headers)", async () => {
  const plain = makeStore();
  const ruled = makeStore({ rules: { beforeCreate: () => {}, afterCreate: () => {} } });
  const headers = { "x-request-id": "same" };
  for (const store of [plain, ruled]) await post(store, { name: "Rex", categoryId: 1 }, headers);
  const a = await post(plain, { name: "Tom", categoryId: 2 }, headers);
  const b = await post(ruled, { name: "Tom", categoryId: 2 }, headers);
  assert.equal(a, b);
});

test("OpenAPI: the served document lists the declared rule codes in createPet's answers, by status; the committed one has none", async () => {
  const rules: PetStoreRules = {
    ...categoryRule,
    codes: [
      { code: "unknown_category", status: 422, description: "categoryId is not one of our categories." },
      { code: "name_taken", status: 409, description: "Another pet already has this name." },
      { code: "bad_name", status: 400, description: "The name breaks the shop's naming rules." },
    ],
  };
  const store = makeStore({ rules });
  const served = await call(store, "GET", "/v1/openapi.json", { auth: false });
  const doc = json(served) as ReturnType<typeof buildOpenApi>;
  const responses = doc.paths["/pets"].post.responses;
  const codesOf = (status: string) =>
    responses[status].content["application/json"].schema.allOf[1].properties.code.enum;
  assert.equal(codesOf("422"), ["idempotency_key_reused", "unknown_category"]);
  assert.equal(codesOf("409"), ["idempotency_key_in_use", "name_taken"]);
  assert.equal(codesOf("400"), [
    "invalid_request",
    "invalid_body",
    "malformed_json",
    "invalid_idempotency_key",
    "bad_name",
  ]);
  assert.is(responses["422"].content["application/json"].examples.unknown_category.value.status, 422);
  assert.ok(doc.components.schemas.Error.properties.code.enum.includes("name_taken"));
  assert.is(doc.paths["/pets"].get.responses["422"], undefined, "only createPet");

  const committed = buildOpenApi();
  const committed422 = committed.paths["/pets"].post.responses["422"];
  assert.equal(committed422.content["application/json"].schema.allOf[1].properties.code.enum, [
    "idempotency_key_reused",
  ]);
  assert.not.ok(committed.components.schemas.Error.properties.code.enum.includes("unknown_category"));

  // A rule's answer conforms to the served document (and would not to the committed one).
  const refused = await post(store, { name: "Rex", categoryId: 9 });
  const check = createResponseChecker(doc);
  assert.equal(check({ method: "POST", path: "/v1/pets", ...refused }), []);
  assert.ok(createResponseChecker(committed)({ method: "POST", path: "/v1/pets", ...refused }).length > 0);
});

test("OpenAPI: without declared codes the served document is the committed one (without CORS: no preflights)", async () => {
  const store = makeStore({ rules: { beforeCreate: () => {} } });
  const served = json(await call(store, "GET", "/v1/openapi.json", { auth: false }));
  assert.equal(served, JSON.parse(JSON.stringify(buildOpenApi({ cors: false }))));
});

test("auth header forms give the same scope (the scheme is case-insensitive): one caller, one scope", async () => {
  const scopes: (string | undefined)[] = [];
  const store = makeStore({ rules: { beforeCreate: (_p, c) => void scopes.push(c.scope) } });
  await post(store, { name: "a", categoryId: 1 }, { authorization: AUTH });
  await post(store, { name: "b", categoryId: 1 }, { authorization: `bearer ${KEY}` });
  assert.is(scopes.length, 2);
  assert.is(scopes[0], scopes[1]);
});

test.run();
