/**
 * Who is calling, through `handle()`: RFC 6750's answers (401 without an error attribute when no
 * credentials came, `invalid_token` for bad ones, 403 insufficient_scope naming the scope), the
 * principal in the rules' context, `observe`, the span (`enduser.id`) and the rate limit, never
 * the token.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { apiKeys } from "../../../lib/entries/auth.ts";
import type { Observation } from "../../../lib/entries/observe.ts";
import type { PetStore, PetStoreOptions, RuleContext } from "../../../lib/index.ts";
import { createPetStore } from "../../../lib/index.ts";
import { errorOf } from "../../support/helpers.ts";
import { recordSpans, registerContext } from "../../support/tracing.ts";

const READ = "read-only-key-123";
const WRITE = "read-write-key-456";
const keys = [
  { name: "reader", key: READ, scopes: ["pets:read"] },
  { name: "writer", key: WRITE, scopes: ["pets:read", "pets:write"] },
];
const NEW_PET = JSON.stringify({ name: "Rex", categoryId: 1 });

function store(options: Partial<PetStoreOptions> = {}): PetStore {
  return createPetStore({ auth: { keys }, onError: () => {}, ...options });
}

function send(s: PetStore, method: string, path: string, authorization?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (authorization !== undefined) headers.authorization = authorization;
  return s.handle({ method, path, headers, body: method === "POST" ? NEW_PET : undefined });
}

test("auth: no credentials is 401 unauthorized with a challenge without an error attribute (RFC 6750 3.1)", async () => {
  const res = await send(store(), "GET", "/v1/pets");
  assert.is(res.status, 401);
  assert.is(errorOf(res).code, "unauthorized");
  assert.is(res.headers["www-authenticate"], 'Bearer realm="petstore"');
});

test('auth: an unknown key, a wrong scheme or an empty token is 401 with error="invalid_token"', async () => {
  for (const authorization of ["Bearer nope", "Basic abc", "Bearer "]) {
    const res = await send(store(), "GET", "/v1/pets", authorization);
    assert.is(res.status, 401, authorization);
    assert.is(res.headers["www-authenticate"], 'Bearer realm="petstore", error="invalid_token"', authorization);
  }
});

test("scopes: a read-only key lists and gets; its create is 403 insufficient_scope naming pets:write, and stores nothing", async () => {
  const s = store();
  await s.createPet({ name: "Tom", categoryId: 1 });
  assert.is((await send(s, "GET", "/v1/pets", `Bearer ${READ}`)).status, 200);
  assert.is((await send(s, "GET", "/v1/pets/1", `Bearer ${READ}`)).status, 200);
  assert.is((await send(s, "HEAD", "/v1/pets", `Bearer ${READ}`)).status, 200);
  const refused = await send(s, "POST", "/v1/pets", `Bearer ${READ}`);
  assert.is(refused.status, 403);
  assert.equal(errorOf(refused).code, "insufficient_scope");
  assert.is(
    refused.headers["www-authenticate"],
    'Bearer realm="petstore", error="insufficient_scope", scope="pets:write"',
  );
  assert.is((await s.listPets()).pets.length, 1, "nothing stored");
  assert.is((await send(s, "POST", "/v1/pets", `Bearer ${WRITE}`)).status, 201);
});

test("scopes: a write-only principal is 403 on listPets and getPet naming pets:read (with getPet's deprecation headers)", async () => {
  const s = createPetStore({ auth: () => ({ id: "robot", scopes: ["pets:write"] }), onError: () => {} });
  const list = await send(s, "GET", "/v1/pets", "Bearer x");
  assert.is(list.status, 403);
  assert.is(list.headers["www-authenticate"], 'Bearer realm="petstore", error="insufficient_scope", scope="pets:read"');
  const get = await send(s, "GET", "/v1/pets/1", "Bearer x");
  assert.is(get.status, 403);
  assert.ok(get.headers.deprecation, "the route's own headers stay");
  assert.is((await send(s, "POST", "/v1/pets", "Bearer x")).status, 201);
});

test("scopes: the scope check comes after authentication and before the body is read", async () => {
  const s = store();
  let read = false;
  const res = await s.handle({
    method: "POST",
    path: "/v1/pets",
    headers: { authorization: `Bearer ${READ}`, "content-type": "text/plain" },
    body: async () => {
      read = true;
      return "not json";
    },
  });
  assert.is(res.status, 403, "403 before 415");
  assert.not.ok(read);
});

test("auth: a verifier answering true is every scope; false, null or undefined is 401; another shape is 500 reported", async () => {
  for (const [verdict, status] of [
    [true, 201],
    [false, 401],
    [null, 401],
    [undefined, 401],
    [{ id: "", scopes: [] }, 500],
    [{ id: "a", scopes: "pets:write" }, 500],
  ] as const) {
    const errors: unknown[] = [];
    const s = createPetStore({ auth: () => verdict as boolean, onError: (e) => errors.push(e) });
    const res = await send(s, "POST", "/v1/pets", "Bearer t");
    assert.is(res.status, status, JSON.stringify(verdict));
    assert.is(errors.length, status === 500 ? 1 : 0);
  }
});

test("principal: the rules' context, observe and the rate limit name the principal, never the token", async () => {
  const contexts: RuleContext[] = [];
  const seen: Observation[] = [];
  const s = store({
    rules: { beforeCreate: (_pet, context) => void contexts.push(context) },
    observe: (o) => void seen.push(o),
    rateLimit: { limit: 2, windowSeconds: 60 },
  });
  assert.is((await send(s, "POST", "/v1/pets", `Bearer ${WRITE}`)).status, 201);
  assert.equal(contexts[0]?.principal, { id: "writer", scopes: ["pets:read", "pets:write"] });
  await send(s, "GET", "/v1/pets", `Bearer ${WRITE}`);
  assert.is((await send(s, "GET", "/v1/pets", `Bearer ${WRITE}`)).status, 429, "writer's own limit");
  assert.is((await send(s, "GET", "/v1/pets", `Bearer ${READ}`)).status, 200, "reader's limit is its own");
  const requests = seen.filter((o) => o.kind === "request");
  assert.equal(
    requests.map((o) => o.principal),
    ["writer", "writer", "writer", "reader"],
  );
  const refusal = seen.find((o) => o.kind === "rateLimited");
  assert.is(refusal?.kind === "rateLimited" ? refusal.scope : undefined, "writer");
  assert.not.ok(JSON.stringify(seen).includes(WRITE));
  assert.not.ok(JSON.stringify(contexts).includes(WRITE));
});

test("principal: two keys of one name are one principal: one rate limit between them", async () => {
  const s = createPetStore({
    auth: apiKeys([
      { name: "ci", key: "old-ci-key" },
      { name: "ci", key: "new-ci-key" },
    ]),
    rateLimit: { limit: 2, windowSeconds: 60 },
  });
  assert.is((await send(s, "GET", "/v1/pets", "Bearer old-ci-key")).status, 200);
  assert.is((await send(s, "GET", "/v1/pets", "Bearer new-ci-key")).status, 200);
  assert.is((await send(s, "GET", "/v1/pets", "Bearer new-ci-key")).status, 429);
});

test("principal: the request's span carries enduser.id, and no attribute holds the token", async () => {
  const unregister = registerContext();
  const { provider, spans } = recordSpans();
  const s = store({ tracerProvider: provider });
  await send(s, "GET", "/v1/pets", `Bearer ${READ}`);
  await send(s, "GET", "/v1/pets", "Bearer wrong-token");
  unregister();
  const [ok, bad] = spans().filter((span) => span.name === "GET /v1/pets");
  assert.is(ok?.attributes["enduser.id"], "reader");
  assert.is(bad?.attributes["enduser.id"], undefined, "no principal for a refused token");
  assert.not.ok(JSON.stringify(spans().map((x) => x.attributes)).includes(READ));
});

test("principal: the response carries the principal for the adapter's log line (never sent as a header)", async () => {
  const res = await send(store(), "GET", "/v1/pets", `Bearer ${READ}`);
  assert.is(res.principal, "reader");
  assert.not.ok(JSON.stringify(res.headers).includes("reader"));
});

test.run();
