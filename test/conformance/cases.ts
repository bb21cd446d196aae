/**
 * The conformance cases, written once. Each case talks to a target through `client.send` and
 * asserts what the contract says; conformance.test.ts runs every case on every target and also
 * checks that all targets gave the same answers.
 */
import * as assert from "uvu/assert";
import type { Answer, Req } from "./targets.ts";
import { KEY } from "./targets.ts";

export interface Client {
  send(req: Req): Promise<Answer>;
  /** Creates `count` pets directly in the store (names "pet-1", "pet-2", … in creation order). */
  seed(count: number, status?: "available" | "pending" | "sold"): Promise<void>;
}

export interface Case {
  /** The rule the case proves; it is the test's name. */
  rule: string;
  run(client: Client): Promise<void>;
}

export const AUTH = { authorization: `Bearer ${KEY}` };
export const JSON_BODY = { ...AUTH, "content-type": "application/json" };
const DEPRECATION = {
  deprecation: "@1795564800",
  sunset: "Thu, 05 Dec 2030 00:00:00 GMT",
  link: '</v1/pets>; rel="successor-version"',
};
const CHALLENGE = 'Bearer realm="petstore"';
const CHALLENGE_INVALID = 'Bearer realm="petstore", error="invalid_token"';

const get = (path: string, headers: Record<string, string> = AUTH): Req => ({ method: "GET", path, headers });
const post = (body: string | Buffer | undefined, headers: Record<string, string> = JSON_BODY): Req => ({
  method: "POST",
  path: "/v1/pets",
  headers,
  ...(body === undefined ? {} : { body }),
});

/** Asserts an Error answer: status, and a body `{ code, message, status }` (plus optional details). */
function expectError(answer: Answer, status: number, code: string): Record<string, unknown> {
  assert.is(answer.status, status, `status (body ${answer.body})`);
  const body = JSON.parse(answer.body);
  assert.is(body.code, code);
  assert.is(body.status, status);
  assert.type(body.message, "string");
  return body;
}

function expectHeaders(answer: Answer, expected: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(expected)) assert.is(answer.headers[name], value, `header ${name}`);
}

const pet = (id: number, name: string, categoryId: number, status: string) =>
  `{"id":${id},"name":"${name}","categoryId":${categoryId},"status":"${status}"}`;

export const CASES: Case[] = [
  // --- Routing: 404, 405 + Allow, HEAD -------------------------------------------------------
  {
    rule: "routing: an unknown path under the base path gives 404 not_found",
    async run(c) {
      expectError(await c.send(get("/v1/owners")), 404, "not_found");
    },
  },
  {
    rule: "routing: /v1/pets/ (trailing slash) is not /v1/pets and gives 404 not_found",
    async run(c) {
      expectError(await c.send(get("/v1/pets/")), 404, "not_found");
    },
  },
  {
    rule: "routing: the base path alone gives 404 not_found",
    async run(c) {
      expectError(await c.send(get("/v1")), 404, "not_found");
    },
  },
  {
    rule: "routing: an unknown path gives 404 before 401 (no key)",
    async run(c) {
      expectError(await c.send(get("/v1/pets/1/owner", {})), 404, "not_found");
    },
  },
  {
    rule: "routing: DELETE /v1/pets gives 405 method_not_allowed with Allow: GET, HEAD, POST",
    async run(c) {
      const answer = await c.send({ method: "DELETE", path: "/v1/pets", headers: AUTH });
      expectError(answer, 405, "method_not_allowed");
      expectHeaders(answer, { allow: "GET, HEAD, POST" });
    },
  },
  {
    rule: "routing: POST /v1/pets/{petId} gives 405 with Allow: GET, HEAD, before 401 (no key)",
    async run(c) {
      const answer = await c.send({
        method: "POST",
        path: "/v1/pets/1",
        headers: { "content-type": "application/json" },
      });
      expectError(answer, 405, "method_not_allowed");
      expectHeaders(answer, { allow: "GET, HEAD" });
    },
  },
  {
    rule: "routing: PUT with a body on /v1/pets gives 405 (the body is not looked at)",
    async run(c) {
      const answer = await c.send({ method: "PUT", path: "/v1/pets", headers: JSON_BODY, body: "{not json" });
      expectError(answer, 405, "method_not_allowed");
      expectHeaders(answer, { allow: "GET, HEAD, POST" });
    },
  },
  {
    rule: "routing: HEAD /v1/pets answers as GET does, without a body",
    async run(c) {
      await c.seed(2);
      const full = await c.send(get("/v1/pets"));
      const head = await c.send({ method: "HEAD", path: "/v1/pets", headers: AUTH });
      assert.is(head.status, 200);
      assert.is(head.body, "");
      assert.is(head.headers["content-length"], String(Buffer.byteLength(full.body)));
    },
  },
  {
    rule: "routing: HEAD /v1/pets/{petId} answers 200 with the deprecation headers and no body",
    async run(c) {
      await c.seed(1);
      const head = await c.send({ method: "HEAD", path: "/v1/pets/1", headers: AUTH });
      assert.is(head.status, 200);
      assert.is(head.body, "");
      expectHeaders(head, DEPRECATION);
    },
  },

  // --- Authentication --------------------------------------------------------------------------
  {
    rule: 'auth: a missing key gives 401 unauthorized with WWW-Authenticate: Bearer realm="petstore"',
    async run(c) {
      const answer = await c.send(get("/v1/pets", {}));
      expectError(answer, 401, "unauthorized");
      expectHeaders(answer, { "www-authenticate": CHALLENGE });
    },
  },
  {
    rule: 'auth: an unknown key gives 401 with error="invalid_token"',
    async run(c) {
      const answer = await c.send(get("/v1/pets", { authorization: "Bearer not-the-key" }));
      expectError(answer, 401, "unauthorized");
      expectHeaders(answer, { "www-authenticate": CHALLENGE_INVALID });
    },
  },
  {
    rule: 'auth: another scheme (Basic) gives 401 with error="invalid_token"',
    async run(c) {
      const answer = await c.send(get("/v1/pets", { authorization: "Basic dXNlcjpwYXNz" }));
      expectError(answer, 401, "unauthorized");
      expectHeaders(answer, { "www-authenticate": CHALLENGE_INVALID });
    },
  },
  {
    rule: 'auth: an empty bearer token gives 401 with error="invalid_token"',
    async run(c) {
      const answer = await c.send(get("/v1/pets", { authorization: "Bearer " }));
      expectError(answer, 401, "unauthorized");
      expectHeaders(answer, { "www-authenticate": CHALLENGE_INVALID });
    },
  },
  {
    rule: "auth: the scheme name is case-insensitive",
    async run(c) {
      const answer = await c.send(get("/v1/pets", { authorization: `bEaReR ${KEY}` }));
      assert.is(answer.status, 200);
      assert.is(answer.body, "[]");
    },
  },
  {
    rule: "auth: a key in the query string is never accepted",
    async run(c) {
      const answer = await c.send(get(`/v1/pets?api_key=${KEY}&access_token=${KEY}`, {}));
      expectError(answer, 401, "unauthorized");
      expectHeaders(answer, { "www-authenticate": CHALLENGE });
      assert.not.ok(answer.body.includes(KEY), "the key is not echoed");
    },
  },
  {
    rule: "auth: a missing key on GET /v1/pets/999999 gives 401, never 404",
    async run(c) {
      expectError(await c.send(get("/v1/pets/999999", {})), 401, "unauthorized");
    },
  },
  {
    rule: "auth: 401 comes before 415, 413 and 400 (the body is not read)",
    async run(c) {
      const noKey = { "content-type": "text/plain" };
      expectError(await c.send(post("hello", noKey)), 401, "unauthorized");
      const tooBig = Buffer.alloc(70_000, 32);
      expectError(await c.send(post(tooBig, { "content-type": "application/json" })), 401, "unauthorized");
      expectError(await c.send(post("{oops", { "content-type": "application/json" })), 401, "unauthorized");
    },
  },

  // --- Content: 415, 413, 400 ------------------------------------------------------------------
  {
    rule: "createPet: a body that is not application/json gives 415 unsupported_media_type",
    async run(c) {
      const headers = { ...AUTH, "content-type": "text/plain" };
      expectError(await c.send(post('{"name":"Rex","categoryId":1}', headers)), 415, "unsupported_media_type");
      expectError(await c.send(post('{"name":"Rex","categoryId":1}', AUTH)), 415, "unsupported_media_type");
      expectError(await c.send(post("{}", { ...AUTH, "content-type": "json" })), 415, "unsupported_media_type");
    },
  },
  {
    rule: "createPet: application/json with parameters (charset=utf-8) is accepted",
    async run(c) {
      const headers = { ...AUTH, "content-type": "Application/JSON; charset=utf-8" };
      const answer = await c.send(post('{"name":"Rex","categoryId":1}', headers));
      assert.is(answer.status, 201);
    },
  },
  {
    rule: "createPet: a Content-Length over the limit gives 413 payload_too_large",
    async run(c) {
      expectError(await c.send(post(Buffer.alloc(64 * 1024 + 1, 32))), 413, "payload_too_large");
    },
  },
  {
    rule: "createPet: a chunked body over the limit gives 413 payload_too_large",
    async run(c) {
      const headers = { ...JSON_BODY, "transfer-encoding": "chunked" };
      expectError(await c.send(post(Buffer.alloc(200_000, 32), headers)), 413, "payload_too_large");
    },
  },
  {
    rule: "createPet: a body of exactly the limit is read (and judged on its content)",
    async run(c) {
      const body = `{"name":"Rex","categoryId":1}`.padEnd(64 * 1024, " ");
      assert.is((await c.send(post(body))).status, 201);
    },
  },
  {
    rule: "createPet: unparsable JSON gives 400 malformed_json",
    async run(c) {
      expectError(await c.send(post('{"name":"Rex",')), 400, "malformed_json");
      expectError(await c.send(post(Buffer.from([0xff, 0xfe, 0x7b]))), 400, "malformed_json"); // not UTF-8
    },
  },
  {
    rule: "createPet: a missing body gives 400 invalid_body",
    async run(c) {
      expectError(await c.send(post(undefined)), 400, "invalid_body");
      expectError(await c.send(post("")), 400, "invalid_body");
    },
  },
  {
    rule: "createPet: a body that is not a JSON object gives 400 invalid_body",
    async run(c) {
      expectError(await c.send(post("[]")), 400, "invalid_body");
      expectError(await c.send(post("null")), 400, "invalid_body");
      expectError(await c.send(post('"Rex"')), 400, "invalid_body");
    },
  },
  {
    rule: "createPet: an unknown field (id, __proto__) gives 400 invalid_body naming it",
    async run(c) {
      const id = expectError(await c.send(post('{"id":7,"name":"Rex","categoryId":1}')), 400, "invalid_body");
      assert.ok(JSON.stringify(id.details).includes('"id"'), "details name the field");
      const proto = await c.send(post('{"__proto__":{"x":1},"name":"Rex","categoryId":1}'));
      expectError(proto, 400, "invalid_body");
    },
  },
  {
    rule: "createPet: invalid values (categoryId as a string, 5.5, 2^53, status null, blank name) give 400 invalid_body",
    async run(c) {
      for (const body of [
        '{"name":"Rex","categoryId":"5"}',
        '{"name":"Rex","categoryId":5.5}',
        '{"name":"Rex","categoryId":9007199254740992}',
        '{"name":"Rex","categoryId":1,"status":null}',
        '{"name":"   ","categoryId":1}',
        '{"categoryId":1}',
      ]) {
        expectError(await c.send(post(body)), 400, "invalid_body");
      }
    },
  },
  {
    rule: "createPet: 201 with the Pet in key order (id, name, categoryId, status) and Location",
    async run(c) {
      const answer = await c.send(post('{"status":"sold","categoryId":3,"name":"Tom"}'));
      assert.is(answer.status, 201);
      assert.is(answer.body, pet(1, "Tom", 3, "sold"));
      expectHeaders(answer, { location: "/v1/pets/1" });
      const second = await c.send(post('{"name":"Rex","categoryId":1}'));
      assert.is(second.body, pet(2, "Rex", 1, "available"));
      expectHeaders(second, { location: "/v1/pets/2" });
    },
  },

  // --- listPets ------------------------------------------------------------------------------------
  {
    rule: "listPets: an empty store gives 200 and the bare array []",
    async run(c) {
      const answer = await c.send(get("/v1/pets"));
      assert.is(answer.status, 200);
      assert.is(answer.body, "[]");
      assert.is(answer.headers.link, undefined);
    },
  },
  {
    rule: 'listPets: a full page carries Link rel="next"; following it visits every pet once, in order',
    async run(c) {
      await c.seed(5);
      const seen: number[] = [];
      let path: string | undefined = "/v1/pets?limit=2";
      for (let page = 0; path !== undefined && page < 10; page++) {
        const answer = await c.send(get(path));
        assert.is(answer.status, 200);
        for (const p of JSON.parse(answer.body)) seen.push(p.id);
        const link = answer.headers.link;
        path = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
        if (link !== undefined) assert.ok(path?.startsWith("/v1/pets?limit=2&cursor="), link);
      }
      assert.equal(seen, [1, 2, 3, 4, 5]);
    },
  },
  {
    rule: "listPets: without limit a page holds 20 pets, with a next link",
    async run(c) {
      await c.seed(25);
      const answer = await c.send(get("/v1/pets"));
      assert.is(JSON.parse(answer.body).length, 20);
      assert.match(answer.headers.link ?? "", /^<\/v1\/pets\?limit=20&cursor=[a-z0-9]+>; rel="next"$/);
    },
  },
  {
    rule: "listPets: status filters, and the next link keeps it",
    async run(c) {
      await c.seed(2, "sold");
      await c.seed(2, "pending");
      await c.seed(2, "sold");
      const answer = await c.send(get("/v1/pets?status=sold&limit=3"));
      assert.equal(
        JSON.parse(answer.body).map((p: { id: number }) => p.id),
        [1, 2, 5],
      );
      assert.match(answer.headers.link ?? "", /^<\/v1\/pets\?limit=3&status=sold&cursor=[a-z0-9]+>; rel="next"$/);
    },
  },
  {
    rule: "listPets: an invalid or repeated limit gives 400 invalid_query",
    async run(c) {
      for (const query of ["limit=0", "limit=101", "limit=1.5", "limit=abc", "limit=", "limit=2&limit=3"]) {
        expectError(await c.send(get(`/v1/pets?${query}`)), 400, "invalid_query");
      }
    },
  },
  {
    rule: "listPets: an invalid or repeated status (case-sensitive) gives 400 invalid_query",
    async run(c) {
      for (const query of ["status=SOLD", "status=lost", "status=", "status=sold&status=sold"]) {
        expectError(await c.send(get(`/v1/pets?${query}`)), 400, "invalid_query");
      }
    },
  },
  {
    rule: "listPets: a cursor the service did not issue gives 400 invalid_query",
    async run(c) {
      expectError(await c.send(get("/v1/pets?cursor=abcdefghij")), 400, "invalid_query");
    },
  },
  {
    rule: "listPets: unknown query parameters are ignored",
    async run(c) {
      await c.seed(1);
      const answer = await c.send(get("/v1/pets?colour=red&x=%zz"));
      assert.is(answer.status, 200);
      assert.is(answer.body, `[${pet(1, "pet-1", 1, "available")}]`);
    },
  },

  // --- getPet (deprecated) -------------------------------------------------------------------------
  {
    rule: "getPet: 200 carries the Pet and Deprecation, Sunset and Link successor-version",
    async run(c) {
      await c.seed(1);
      const answer = await c.send(get("/v1/pets/1"));
      assert.is(answer.status, 200);
      assert.is(answer.body, pet(1, "pet-1", 1, "available"));
      expectHeaders(answer, DEPRECATION);
    },
  },
  {
    rule: "getPet: 404 pet_not_found carries the deprecation headers",
    async run(c) {
      const answer = await c.send(get("/v1/pets/999999"));
      expectError(answer, 404, "pet_not_found");
      expectHeaders(answer, DEPRECATION);
    },
  },
  {
    rule: "getPet: 400 invalid_pet_id (abc, 0, -1, 1.5, 2^53, %zz) carries the deprecation headers",
    async run(c) {
      for (const id of ["abc", "0", "-1", "1.5", "9007199254740992", "%zz"]) {
        const answer = await c.send(get(`/v1/pets/${id}`));
        expectError(answer, 400, "invalid_pet_id");
        expectHeaders(answer, DEPRECATION);
      }
    },
  },

  // --- Idempotent creates: Idempotency-Key ------------------------------------------------------
  {
    rule: "idempotency: a retry with the same key and NewPet answers 201 with the same body and Location plus Idempotent-Replayed: true, and stores one pet",
    async run(c) {
      const first = await c.send(post('{"name":"Rex","categoryId":1}', { ...JSON_BODY, "idempotency-key": "order-1" }));
      assert.is(first.status, 201);
      assert.is(first.headers["idempotent-replayed"], undefined);
      const retry = await c.send(
        post('{"categoryId":1,"status":"available","name":"Rex"}', { ...JSON_BODY, "idempotency-key": '"order-1"' }),
      );
      assert.is(retry.status, 201);
      assert.is(retry.body, first.body);
      expectHeaders(retry, { location: first.headers.location, "idempotent-replayed": "true" });
      assert.is((await c.send(get("/v1/pets"))).body, `[${pet(1, "Rex", 1, "available")}]`);
    },
  },
  {
    rule: "idempotency: the same key with another NewPet is 422 idempotency_key_reused and stores nothing",
    async run(c) {
      await c.send(post('{"name":"Rex","categoryId":1}', { ...JSON_BODY, "idempotency-key": "k" }));
      const answer = await c.send(post('{"name":"Mia","categoryId":1}', { ...JSON_BODY, "idempotency-key": "k" }));
      expectError(answer, 422, "idempotency_key_reused");
      assert.not.match(answer.body, /Rex/);
      assert.is((await c.send(get("/v1/pets"))).body, `[${pet(1, "Rex", 1, "available")}]`);
    },
  },
  {
    rule: "idempotency: an empty or malformed key is 400 invalid_idempotency_key, checked after auth and before content type, size and body",
    async run(c) {
      for (const key of ["", '""', "a b", 'a"b', "x".repeat(256), "a, b"]) {
        expectError(
          await c.send(post('{"name":"Rex","categoryId":1}', { ...JSON_BODY, "idempotency-key": key })),
          400,
          "invalid_idempotency_key",
        );
      }
      const bad = { "idempotency-key": "a b" };
      expectError(
        await c.send(post("{", { ...AUTH, ...bad, "content-type": "text/plain" })),
        400,
        "invalid_idempotency_key",
      );
      expectError(await c.send(post("{", { ...JSON_BODY, ...bad })), 400, "invalid_idempotency_key");
      expectError(
        await c.send(post('{"name":"Rex","categoryId":1}', { "content-type": "application/json", ...bad })),
        401,
        "unauthorized",
      );
      assert.is((await c.send(get("/v1/pets"))).body, "[]");
    },
  },
  {
    rule: "idempotency: 10 concurrent creates with one key make one pet; each answer is its 201 or 409 idempotency_key_in_use with Retry-After: 1",
    async run(c) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          c.send(post('{"name":"Rex","categoryId":1}', { ...JSON_BODY, "idempotency-key": "same" })),
        ),
      );
      for (const answer of answers) {
        if (answer.status === 409) {
          expectError(answer, 409, "idempotency_key_in_use");
          expectHeaders(answer, { "retry-after": "1" });
        } else assert.is(answer.body, pet(1, "Rex", 1, "available"));
      }
      assert.is(answers.filter((a) => a.status === 201 && a.headers["idempotent-replayed"] === undefined).length, 1);
      assert.is((await c.send(get("/v1/pets"))).body, `[${pet(1, "Rex", 1, "available")}]`);
    },
  },

  // --- Every response ------------------------------------------------------------------------------
  {
    rule: "every answer: a valid client X-Request-Id is echoed",
    async run(c) {
      const answer = await c.send(get("/v1/pets", { ...AUTH, "x-request-id": "client-id_1.2" }));
      expectHeaders(answer, { "x-request-id": "client-id_1.2" });
      const error = await c.send(get("/v1/nope", { "x-request-id": "A".repeat(128) }));
      expectHeaders(error, { "x-request-id": "A".repeat(128) });
    },
  },
  {
    rule: "every answer: an invalid or missing X-Request-Id is replaced by a new random one",
    async run(c) {
      const ids = new Set<string>();
      for (const id of ["has space", "A".repeat(129), "semi;colon", ""]) {
        const answer = await c.send(get("/v1/pets", { ...AUTH, "x-request-id": id }));
        const got = answer.headers["x-request-id"] ?? "";
        assert.is.not(got, id);
        assert.match(got, /^[A-Za-z0-9._-]{1,128}$/);
        ids.add(got);
      }
      ids.add((await c.send(get("/v1/pets"))).headers["x-request-id"] ?? "");
      assert.is(ids.size, 5, "every generated id is new");
    },
  },
];
