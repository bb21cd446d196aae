/**
 * The conformance cases, written once: each proves one rule of the contract against a target and
 * rejects (an `AssertionError`) when the target breaks it. Pets are seeded through the API's own
 * POST, so a case needs nothing but HTTP.
 */
import { assert } from "./assert.ts";
import { CACHING_CASES } from "./caching-cases.ts";
import type { Case } from "./case-kit.ts";
import { auth, deprecation, expectError, expectHeaders, get } from "./case-kit.ts";
import type { Answer, Client, ConformanceTarget, Req } from "./client.ts";
import { onTarget } from "./client.ts";

const CHALLENGE = 'Bearer realm="petstore"';
const CHALLENGE_INVALID = 'Bearer realm="petstore", error="invalid_token"';
const CHALLENGE_REQUEST = 'Bearer realm="petstore", error="invalid_request"';
const CHALLENGE_WRITE = 'Bearer realm="petstore", error="insufficient_scope", scope="pets:write"';

const jsonBody = (c: Client) => ({ ...auth(c), "content-type": "application/json" });
const post = (
  c: Client,
  body: string | Uint8Array | undefined,
  headers: Record<string, string> = jsonBody(c),
): Req => ({
  method: "POST",
  path: `${c.base}/pets`,
  headers,
  ...(body === undefined ? {} : { body }),
});
const bytes = (size: number) => new Uint8Array(size).fill(32); // spaces

/** The pattern of a next link to the collection with `query` before its cursor. */
function linkPattern(c: Client, query: string): RegExp {
  const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  return new RegExp(`^<${literal(`${c.base}/pets?${query}&cursor=`)}[a-z0-9]+>; rel="next"$`);
}

const CORS_ALLOWED = "Authorization, Content-Type, Idempotency-Key, X-Request-Id, If-None-Match";
const CORS_EXPOSED =
  "Link, Location, X-Request-Id, Retry-After, Deprecation, Sunset, Idempotent-Replayed, WWW-Authenticate, ETag";

/** A CORS preflight of `path` (under the base path) from `origin`, asking for a POST. */
const preflight = (c: Client, path: string, origin: string): Req => ({
  method: "OPTIONS",
  path: `${c.base}${path}`,
  headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization" },
});

/** The answer's CORS headers (Access-Control-*). */
function corsHeaders(answer: Answer): Record<string, string> {
  return Object.fromEntries(Object.entries(answer.headers).filter(([name]) => name.startsWith("access-control-")));
}

/** The rate limit headers of an answer: the requests left and the seconds to the window's end. */
function rateOf(answer: Answer): { r: number; t: number } {
  const match = /^"default";r=([0-9]+);t=([0-9]+)$/.exec(answer.headers.ratelimit ?? "");
  assert.ok(match, `RateLimit header: ${answer.headers.ratelimit}`);
  return { r: Number(match?.[1]), t: Number(match?.[2]) };
}

const pet = (id: number, name: string, categoryId: number, status: string) =>
  `{"id":${id},"name":"${name}","categoryId":${categoryId},"status":"${status}"}`;

const CASES: Case[] = [
  // --- Routing: 404, 405 + Allow, HEAD -------------------------------------------------------
  {
    name: "routing: an unknown path under the base path gives 404 not_found",
    async run(c) {
      expectError(await c.send(get(c, "/owners")), 404, "not_found");
    },
  },
  {
    name: "routing: {base}/pets/ (trailing slash) is not {base}/pets and gives 404 not_found",
    async run(c) {
      expectError(await c.send(get(c, "/pets/")), 404, "not_found");
    },
  },
  {
    name: "routing: the base path alone gives 404 not_found",
    async run(c) {
      expectError(await c.send(get(c, "")), 404, "not_found");
    },
  },
  {
    name: "routing: an unknown path gives 404 before 401 (no key)",
    async run(c) {
      expectError(await c.send(get(c, "/pets/1/owner", {})), 404, "not_found");
    },
  },
  {
    name: "routing: DELETE {base}/pets gives 405 method_not_allowed with Allow: GET, HEAD, POST",
    async run(c) {
      const answer = await c.send({ method: "DELETE", path: `${c.base}/pets`, headers: auth(c) });
      expectError(answer, 405, "method_not_allowed");
      expectHeaders(answer, { allow: "GET, HEAD, POST" });
    },
  },
  {
    name: "routing: POST {base}/pets/{petId} gives 405 with Allow: GET, HEAD, before 401 (no key)",
    async run(c) {
      const answer = await c.send({
        method: "POST",
        path: `${c.base}/pets/1`,
        headers: { "content-type": "application/json" },
      });
      expectError(answer, 405, "method_not_allowed");
      expectHeaders(answer, { allow: "GET, HEAD" });
    },
  },
  {
    name: "routing: PUT with a body on {base}/pets gives 405 (the body is not looked at)",
    async run(c) {
      const answer = await c.send({ method: "PUT", path: `${c.base}/pets`, headers: jsonBody(c), body: "{not json" });
      expectError(answer, 405, "method_not_allowed");
      expectHeaders(answer, { allow: "GET, HEAD, POST" });
    },
  },
  {
    name: "routing: HEAD {base}/pets answers as GET does, without a body",
    async run(c) {
      await c.seed(2);
      const full = await c.send(get(c, "/pets"));
      const head = await c.send({ method: "HEAD", path: `${c.base}/pets`, headers: auth(c) });
      assert.equal(head.status, 200);
      assert.equal(head.body, "");
      assert.equal(head.headers["content-length"], String(new TextEncoder().encode(full.body).length));
    },
  },
  {
    name: "routing: HEAD {base}/pets/{petId} answers 200 with the deprecation headers and no body",
    async run(c) {
      await c.seed(1);
      const head = await c.send({ method: "HEAD", path: `${c.base}/pets/1`, headers: auth(c) });
      assert.equal(head.status, 200);
      assert.equal(head.body, "");
      expectHeaders(head, deprecation(c));
    },
  },

  // --- Authentication --------------------------------------------------------------------------
  {
    name: 'auth: a missing key gives 401 unauthorized with WWW-Authenticate: Bearer realm="petstore"',
    async run(c) {
      const answer = await c.send(get(c, "/pets", {}));
      expectError(answer, 401, "unauthorized");
      expectHeaders(answer, { "www-authenticate": CHALLENGE });
    },
  },
  {
    name: 'auth: an unknown key gives 401 with error="invalid_token"',
    async run(c) {
      const answer = await c.send(get(c, "/pets", { authorization: "Bearer not-the-key" }));
      expectError(answer, 401, "unauthorized");
      expectHeaders(answer, { "www-authenticate": CHALLENGE_INVALID });
    },
  },
  {
    name: 'auth: another scheme (Basic) gives 401 with error="invalid_token"',
    async run(c) {
      const answer = await c.send(get(c, "/pets", { authorization: "Basic dXNlcjpwYXNz" }));
      expectError(answer, 401, "unauthorized");
      expectHeaders(answer, { "www-authenticate": CHALLENGE_INVALID });
    },
  },
  {
    name: 'auth: an empty bearer token gives 401 with error="invalid_token"',
    async run(c) {
      const answer = await c.send(get(c, "/pets", { authorization: "Bearer " }));
      expectError(answer, 401, "unauthorized");
      expectHeaders(answer, { "www-authenticate": CHALLENGE_INVALID });
    },
  },
  {
    name: "auth: the scheme name is case-insensitive",
    async run(c) {
      const answer = await c.send(get(c, "/pets", { authorization: `bEaReR ${c.key}` }));
      assert.equal(answer.status, 200);
      assert.equal(answer.body, "[]");
    },
  },
  {
    name: "auth: a key in the query string is never accepted",
    async run(c) {
      const answer = await c.send(get(c, `/pets?api_key=${c.key}&access_token=${c.key}`, {}));
      expectError(answer, 401, "unauthorized");
      expectHeaders(answer, { "www-authenticate": CHALLENGE });
      assert.ok(!/api_key|access_token/.test(answer.body), "the query string is not echoed");
      if (c.key.length >= 8) assert.ok(!answer.body.includes(c.key), "the key is not echoed");
    },
  },
  {
    name: "auth: a missing key on GET {base}/pets/999999 gives 401, never 404",
    async run(c) {
      expectError(await c.send(get(c, "/pets/999999", {})), 401, "unauthorized");
    },
  },
  {
    name: "auth: 401 comes before 415, 413 and 400 (the body is not read)",
    async run(c) {
      const noKey = { "content-type": "text/plain" };
      expectError(await c.send(post(c, "hello", noKey)), 401, "unauthorized");
      const tooBig = bytes(70_000);
      expectError(await c.send(post(c, tooBig, { "content-type": "application/json" })), 401, "unauthorized");
      expectError(await c.send(post(c, "{oops", { "content-type": "application/json" })), 401, "unauthorized");
    },
  },

  {
    name: 'auth: Authorization given twice (two headers joined with ", ", as Web Headers join them) gives 400 invalid_request with error="invalid_request", before the body is read',
    async run(c) {
      const twice = { authorization: `Bearer ${c.key}, Bearer ${c.key}` };
      for (const req of [
        get(c, "/pets", twice),
        get(c, "/pets/1", twice),
        post(c, "{oops", { ...twice, "content-type": "text/plain" }),
      ]) {
        const answer = await c.send(req);
        expectError(answer, 400, "invalid_request");
        expectHeaders(answer, { "www-authenticate": CHALLENGE_REQUEST });
      }
      assert.equal((await c.send(get(c, "/pets"))).body, "[]", "nothing was created");
    },
  },

  // --- Content: 415, 413, 400 ------------------------------------------------------------------
  {
    name: "createPet: a body that is not application/json gives 415 unsupported_media_type",
    async run(c) {
      const headers = { ...auth(c), "content-type": "text/plain" };
      expectError(await c.send(post(c, '{"name":"Rex","categoryId":1}', headers)), 415, "unsupported_media_type");
      expectError(await c.send(post(c, '{"name":"Rex","categoryId":1}', auth(c))), 415, "unsupported_media_type");
      expectError(await c.send(post(c, "{}", { ...auth(c), "content-type": "json" })), 415, "unsupported_media_type");
    },
  },
  {
    name: "createPet: application/json with parameters (charset=utf-8) is accepted",
    async run(c) {
      const headers = { ...auth(c), "content-type": "Application/JSON; charset=utf-8" };
      const answer = await c.send(post(c, '{"name":"Rex","categoryId":1}', headers));
      assert.equal(answer.status, 201);
    },
  },
  {
    name: "createPet: a charset other than utf-8 gives 415 unsupported_media_type; utf-8 in any case, quoted, is accepted",
    async run(c) {
      const body = '{"name":"Rex","categoryId":1}';
      const latin1 = { ...auth(c), "content-type": "application/json; charset=latin1" };
      expectError(await c.send(post(c, body, latin1)), 415, "unsupported_media_type");
      const quoted = { ...auth(c), "content-type": 'application/json; charset="UTF-8"' };
      assert.equal((await c.send(post(c, body, quoted))).status, 201);
    },
  },
  {
    name: "createPet: a Content-Encoding other than identity (gzip) gives 415 unsupported_media_type; identity is accepted",
    async run(c) {
      const body = '{"name":"Rex","categoryId":1}';
      const gzip = { ...jsonBody(c), "content-encoding": "gzip" };
      const refused = expectError(await c.send(post(c, body, gzip)), 415, "unsupported_media_type");
      assert.match(String(refused.message), /compressed/);
      const identity = { ...jsonBody(c), "content-encoding": "Identity" };
      assert.equal((await c.send(post(c, body, identity))).status, 201);
    },
  },
  {
    name: "createPet: a Content-Length over the limit gives 413 payload_too_large",
    async run(c) {
      expectError(await c.send(post(c, bytes(64 * 1024 + 1))), 413, "payload_too_large");
    },
  },
  {
    name: "createPet: a chunked body over the limit gives 413 payload_too_large",
    async run(c) {
      const headers = { ...jsonBody(c), "transfer-encoding": "chunked" };
      expectError(await c.send(post(c, bytes(200_000), headers)), 413, "payload_too_large");
    },
  },
  {
    name: "createPet: a body of exactly the limit is read (and judged on its content)",
    async run(c) {
      const body = `{"name":"Rex","categoryId":1}`.padEnd(64 * 1024, " ");
      assert.equal((await c.send(post(c, body))).status, 201);
    },
  },
  {
    name: "createPet: unparsable JSON gives 400 malformed_json",
    async run(c) {
      expectError(await c.send(post(c, '{"name":"Rex",')), 400, "malformed_json");
      expectError(await c.send(post(c, new Uint8Array([0xff, 0xfe, 0x7b]))), 400, "malformed_json"); // not UTF-8
    },
  },
  {
    name: "createPet: an object with a repeated member name (I-JSON) gives 400 malformed_json naming it",
    async run(c) {
      for (const [body, member] of [
        ['{"name":"Rex","name":"Mia","categoryId":1}', "name"],
        ['{"__proto__":1,"__proto__":2}', "__proto__"],
        ['{"name":"Rex","categoryId":1,"status":"sold","\\u0073tatus":"sold"}', "status"],
      ] as const) {
        const error = expectError(await c.send(post(c, body)), 400, "malformed_json");
        assert.ok(String(error.message).includes(`"${member}"`), `the message names ${member}: ${error.message}`);
      }
      assert.equal((await c.send(get(c, "/pets"))).body, "[]", "nothing was created");
    },
  },
  {
    name: "createPet: a missing body gives 400 invalid_body",
    async run(c) {
      expectError(await c.send(post(c, undefined)), 400, "invalid_body");
      expectError(await c.send(post(c, "")), 400, "invalid_body");
    },
  },
  {
    name: "createPet: a body that is not a JSON object gives 400 invalid_body",
    async run(c) {
      expectError(await c.send(post(c, "[]")), 400, "invalid_body");
      expectError(await c.send(post(c, "null")), 400, "invalid_body");
      expectError(await c.send(post(c, '"Rex"')), 400, "invalid_body");
    },
  },
  {
    name: "createPet: an unknown field (id, __proto__) gives 400 invalid_body naming it",
    async run(c) {
      const id = expectError(await c.send(post(c, '{"id":7,"name":"Rex","categoryId":1}')), 400, "invalid_body");
      assert.ok(JSON.stringify(id.details).includes('"id"'), "details name the field");
      const proto = await c.send(post(c, '{"__proto__":{"x":1},"name":"Rex","categoryId":1}'));
      expectError(proto, 400, "invalid_body");
    },
  },
  {
    name: "createPet: an unknown field name of 65,000 characters is named cut to 64 characters and …, in an answer of at most 4 KiB",
    async run(c) {
      const name = "f".repeat(65_000);
      const answer = await c.send(post(c, `{"name":"Rex","categoryId":1,"${name}":1}`));
      const error = expectError(answer, 400, "invalid_body");
      const shown = `${"f".repeat(64)}…`;
      assert.deepEqual(error.details, [{ path: shown, message: "is an unknown field" }]);
      assert.ok(String(error.message).includes(shown), "the message names the field, cut");
      assert.ok(new TextEncoder().encode(answer.body).length <= 4096, `the answer takes ${answer.body.length} bytes`);
    },
  },
  {
    name: "createPet: invalid values (categoryId as a string, 5.5, 2^53, status null, blank name) give 400 invalid_body",
    async run(c) {
      for (const body of [
        '{"name":"Rex","categoryId":"5"}',
        '{"name":"Rex","categoryId":5.5}',
        '{"name":"Rex","categoryId":9007199254740992}',
        '{"name":"Rex","categoryId":1,"status":null}',
        '{"name":"   ","categoryId":1}',
        '{"categoryId":1}',
      ]) {
        expectError(await c.send(post(c, body)), 400, "invalid_body");
      }
    },
  },
  {
    name: "createPet: 201 with the Pet in key order (id, name, categoryId, status) and Location",
    async run(c) {
      const answer = await c.send(post(c, '{"status":"sold","categoryId":3,"name":"Tom"}'));
      assert.equal(answer.status, 201);
      assert.equal(answer.body, pet(1, "Tom", 3, "sold"));
      expectHeaders(answer, { location: `${c.base}/pets/1` });
      const second = await c.send(post(c, '{"name":"Rex","categoryId":1}'));
      assert.equal(second.body, pet(2, "Rex", 1, "available"));
      expectHeaders(second, { location: `${c.base}/pets/2` });
    },
  },

  // --- listPets ------------------------------------------------------------------------------------
  {
    name: "listPets: an empty store gives 200 and the bare array []",
    async run(c) {
      const answer = await c.send(get(c, "/pets"));
      assert.equal(answer.status, 200);
      assert.equal(answer.body, "[]");
      assert.equal(answer.headers.link, undefined);
    },
  },
  {
    name: 'listPets: a full page carries Link rel="next"; following it visits every pet once, in order',
    async run(c) {
      await c.seed(5);
      const seen: number[] = [];
      let path: string | undefined = `${c.base}/pets?limit=2`;
      for (let page = 0; path !== undefined && page < 10; page++) {
        const answer = await c.send({ method: "GET", path, headers: auth(c) });
        assert.equal(answer.status, 200);
        for (const p of JSON.parse(answer.body)) seen.push(p.id);
        const link = answer.headers.link;
        path = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
        if (link !== undefined) assert.ok(path?.startsWith(`${c.base}/pets?limit=2&cursor=`), link);
      }
      assert.deepEqual(seen, [1, 2, 3, 4, 5]);
    },
  },
  {
    name: "listPets: without limit a page holds 20 pets, with a next link",
    async run(c) {
      await c.seed(25);
      const answer = await c.send(get(c, "/pets"));
      assert.equal(JSON.parse(answer.body).length, 20);
      assert.match(answer.headers.link ?? "", linkPattern(c, "limit=20"));
    },
  },
  {
    name: "listPets: status filters, and the next link keeps it",
    async run(c) {
      await c.seed(2, "sold");
      await c.seed(2, "pending");
      await c.seed(2, "sold");
      const answer = await c.send(get(c, "/pets?status=sold&limit=3"));
      assert.deepEqual(
        JSON.parse(answer.body).map((p: { id: number }) => p.id),
        [1, 2, 5],
      );
      assert.match(answer.headers.link ?? "", linkPattern(c, "limit=3&status=sold"));
    },
  },
  {
    name: "listPets: an invalid or repeated limit gives 400 invalid_query",
    async run(c) {
      for (const query of ["limit=0", "limit=101", "limit=1.5", "limit=abc", "limit=", "limit=2&limit=3"]) {
        expectError(await c.send(get(c, `/pets?${query}`)), 400, "invalid_query");
      }
    },
  },
  {
    name: "listPets: an invalid or repeated status (case-sensitive) gives 400 invalid_query",
    async run(c) {
      for (const query of ["status=SOLD", "status=lost", "status=", "status=sold&status=sold"]) {
        expectError(await c.send(get(c, `/pets?${query}`)), 400, "invalid_query");
      }
    },
  },
  {
    name: "listPets: a cursor the service did not issue gives 400 invalid_query",
    async run(c) {
      expectError(await c.send(get(c, "/pets?cursor=abcdefghij")), 400, "invalid_query");
    },
  },
  {
    name: "listPets: unknown query parameters are ignored",
    async run(c) {
      await c.seed(1);
      const answer = await c.send(get(c, "/pets?colour=red&x=%zz"));
      assert.equal(answer.status, 200);
      assert.equal(answer.body, `[${pet(1, "pet-1", 1, "available")}]`);
    },
  },

  // --- getPet (deprecated) -------------------------------------------------------------------------
  {
    name: "getPet: 200 carries the Pet and Deprecation, Sunset and Link successor-version",
    async run(c) {
      await c.seed(1);
      const answer = await c.send(get(c, "/pets/1"));
      assert.equal(answer.status, 200);
      assert.equal(answer.body, pet(1, "pet-1", 1, "available"));
      expectHeaders(answer, deprecation(c));
    },
  },
  {
    name: "getPet: 404 pet_not_found carries the deprecation headers",
    async run(c) {
      const answer = await c.send(get(c, "/pets/999999"));
      expectError(answer, 404, "pet_not_found");
      expectHeaders(answer, deprecation(c));
    },
  },
  {
    name: "getPet: 400 invalid_pet_id (abc, 0, -1, 1.5, 2^53, %zz) carries the deprecation headers",
    async run(c) {
      for (const id of ["abc", "0", "-1", "1.5", "9007199254740992", "%zz"]) {
        const answer = await c.send(get(c, `/pets/${id}`));
        expectError(answer, 400, "invalid_pet_id");
        expectHeaders(answer, deprecation(c));
      }
    },
  },

  // --- Idempotent creates: Idempotency-Key ------------------------------------------------------
  {
    name: "idempotency: a retry with the same key and NewPet answers 201 with the same body and Location plus Idempotent-Replayed: true, and stores one pet",
    async run(c) {
      const first = await c.send(
        post(c, '{"name":"Rex","categoryId":1}', { ...jsonBody(c), "idempotency-key": "order-1" }),
      );
      assert.equal(first.status, 201);
      assert.equal(first.headers["idempotent-replayed"], undefined);
      const retry = await c.send(
        post(c, '{"categoryId":1,"status":"available","name":"Rex"}', {
          ...jsonBody(c),
          "idempotency-key": '"order-1"',
        }),
      );
      assert.equal(retry.status, 201);
      assert.equal(retry.body, first.body);
      expectHeaders(retry, { location: first.headers.location, "idempotent-replayed": "true" });
      const created = JSON.parse(first.body);
      assert.equal((await c.send(get(c, "/pets"))).body, `[${pet(created.id, "Rex", 1, "available")}]`);
    },
  },
  {
    name: "idempotency: the same key with another NewPet is 422 idempotency_key_reused and stores nothing",
    async run(c) {
      await c.send(post(c, '{"name":"Rex","categoryId":1}', { ...jsonBody(c), "idempotency-key": "k" }));
      const answer = await c.send(post(c, '{"name":"Mia","categoryId":1}', { ...jsonBody(c), "idempotency-key": "k" }));
      expectError(answer, 422, "idempotency_key_reused");
      assert.doesNotMatch(answer.body, /Rex/);
      assert.equal(JSON.parse((await c.send(get(c, "/pets"))).body).length, 1);
    },
  },
  {
    name: "idempotency: an empty or malformed key is 400 invalid_idempotency_key, checked after auth and before content type, size and body",
    async run(c) {
      for (const key of ["", '""', "a b", 'a"b', "x".repeat(256), "a, b"]) {
        const answer = await c.send(
          post(c, '{"name":"Rex","categoryId":1}', { ...jsonBody(c), "idempotency-key": key }),
        );
        expectError(answer, 400, "invalid_idempotency_key");
      }
      const bad = { "idempotency-key": "a b" };
      expectError(
        await c.send(post(c, "{", { ...auth(c), ...bad, "content-type": "text/plain" })),
        400,
        "invalid_idempotency_key",
      );
      expectError(await c.send(post(c, "{", { ...jsonBody(c), ...bad })), 400, "invalid_idempotency_key");
      expectError(
        await c.send(post(c, '{"name":"Rex","categoryId":1}', { "content-type": "application/json", ...bad })),
        401,
        "unauthorized",
      );
      assert.equal((await c.send(get(c, "/pets"))).body, "[]");
    },
  },
  {
    name: "idempotency: 10 concurrent creates with one key make one pet; each answer is its 201 or 409 idempotency_key_in_use with Retry-After: 1",
    async run(c) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          c.send(post(c, '{"name":"Rex","categoryId":1}', { ...jsonBody(c), "idempotency-key": "same" })),
        ),
      );
      const created = answers.filter((a) => a.status === 201 && a.headers["idempotent-replayed"] === undefined);
      assert.equal(created.length, 1);
      for (const answer of answers) {
        if (answer.status === 409) {
          expectError(answer, 409, "idempotency_key_in_use");
          expectHeaders(answer, { "retry-after": "1" });
        } else assert.equal(answer.body, created[0]?.body);
      }
      assert.equal(JSON.parse((await c.send(get(c, "/pets"))).body).length, 1);
    },
  },

  // --- Every response ------------------------------------------------------------------------------
  {
    name: "every answer: a valid client X-Request-Id is echoed",
    async run(c) {
      const answer = await c.send(get(c, "/pets", { ...auth(c), "x-request-id": "client-id_1.2" }));
      expectHeaders(answer, { "x-request-id": "client-id_1.2" });
      const error = await c.send(get(c, "/nope", { "x-request-id": "A".repeat(128) }));
      expectHeaders(error, { "x-request-id": "A".repeat(128) });
    },
  },
  {
    name: "every answer: X-Content-Type-Options: nosniff, errors and preflights included",
    async run(c) {
      const origin = c.corsOrigin ?? "https://shop.example";
      const answers = [
        await c.send(post(c, '{"name":"Rex","categoryId":1}')),
        await c.send(get(c, "/pets")),
        await c.send({ method: "HEAD", path: `${c.base}/pets/1`, headers: auth(c) }),
        await c.send(get(c, "/pets", {})),
        await c.send(get(c, "/owners")),
        await c.send({ method: "DELETE", path: `${c.base}/pets`, headers: auth(c) }),
        await c.send(post(c, "{oops")),
        await c.send(preflight(c, "/pets", origin)),
      ];
      for (const answer of answers) {
        assert.equal(answer.headers["x-content-type-options"], "nosniff", `the ${answer.status} answer`);
      }
    },
  },
  {
    name: "every answer: an invalid or missing X-Request-Id is replaced by a new random one",
    async run(c) {
      const ids = new Set<string>();
      for (const id of ["has space", "A".repeat(129), "semi;colon", ""]) {
        const answer = await c.send(get(c, "/pets", { ...auth(c), "x-request-id": id }));
        const got = answer.headers["x-request-id"] ?? "";
        assert.notEqual(got, id);
        assert.match(got, /^[A-Za-z0-9._-]{1,128}$/);
        ids.add(got);
      }
      ids.add((await c.send(get(c, "/pets"))).headers["x-request-id"] ?? "");
      assert.equal(ids.size, 5, "every generated id is new");
    },
  },
  {
    name: "cors: a preflight from the allowed origin is 204 before any key, with the path's methods (without CORS: 405 as any OPTIONS)",
    async run(c) {
      const origin = c.corsOrigin ?? "https://shop.example";
      for (const [path, methods] of [
        ["/pets", "GET, HEAD, POST"],
        ["/pets/1", "GET, HEAD"],
      ]) {
        const answer = await c.send(preflight(c, path as string, origin));
        if (c.corsOrigin === undefined) {
          expectError(answer, 405, "method_not_allowed");
          assert.deepEqual(corsHeaders(answer), {}, "CORS is off: no CORS header");
          continue;
        }
        assert.equal(answer.status, 204, `preflight of ${path}`);
        assert.equal(answer.headers["www-authenticate"], undefined, "answered before the key");
        assert.equal(answer.headers["access-control-allow-origin"], origin);
        assert.equal(answer.headers["access-control-allow-methods"], methods);
        assert.equal(answer.headers["access-control-allow-headers"], CORS_ALLOWED);
        assert.match(answer.headers["access-control-max-age"] ?? "", /^[0-9]+$/);
        assert.match(answer.headers.vary ?? "", /\bOrigin\b/);
      }
    },
  },
  {
    name: "cors: every answer to the allowed origin, errors included, names it and exposes the contract's headers (without CORS: none)",
    async run(c) {
      await c.seed(3);
      const origin = c.corsOrigin ?? "https://shop.example";
      const answers = [
        await c.send(get(c, "/pets?limit=2", { ...auth(c), origin })),
        await c.send(get(c, "/pets", { origin })),
        await c.send(get(c, "/pets/999999", { ...auth(c), origin })),
        await c.send(post(c, '{"name":"Rex","categoryId":1}', { ...jsonBody(c), origin })),
      ];
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 401, 404, 201],
      );
      expectError(answers[1] as Answer, 401, "unauthorized");
      for (const answer of answers) {
        if (c.corsOrigin === undefined) {
          assert.deepEqual(corsHeaders(answer), {}, "CORS is off: no CORS header");
          continue;
        }
        assert.equal(answer.headers["access-control-allow-origin"], origin);
        const exposed = c.rateLimit === undefined ? CORS_EXPOSED : `${CORS_EXPOSED}, RateLimit, RateLimit-Policy`;
        assert.equal(answer.headers["access-control-expose-headers"], exposed);
        assert.match(answer.headers.vary ?? "", /\bOrigin\b/);
      }
    },
  },
  {
    name: "cors: a preflight or a request from another origin is answered as before, with no CORS header",
    async run(c) {
      const other = "https://not-allowed.invalid";
      const refused = await c.send(preflight(c, "/pets", other));
      expectError(refused, 405, "method_not_allowed");
      assert.equal(refused.headers.allow, "GET, HEAD, POST");
      const page = await c.send(get(c, "/pets", { ...auth(c), origin: other }));
      assert.equal(page.status, 200);
      for (const answer of [refused, page]) assert.deepEqual(corsHeaders(answer), {});
    },
  },
  {
    name: "rate limits: every counted answer carries RateLimit-Policy and RateLimit counting down, then 429 rate_limited with Retry-After; a 401 is not counted (without limits: no such header)",
    async run(c) {
      const rate = c.rateLimit;
      const first = await c.send(get(c, "/pets"));
      const missing = await c.send(get(c, "/pets", {}));
      expectError(missing, 401, "unauthorized");
      const policy = rate === undefined ? undefined : `"default";q=${rate.limit};w=${rate.windowSeconds}`;
      assert.equal(first.headers["ratelimit-policy"], policy);
      assert.equal(missing.headers["ratelimit-policy"], undefined, "a 401 is not counted");
      assert.equal(missing.headers.ratelimit, undefined, "a 401 is not counted");
      if (rate === undefined) {
        assert.equal(first.headers.ratelimit, undefined, "no rate limits: no RateLimit header");
        return;
      }
      // A window may end during the case: the count then starts again, once.
      let last = rateOf(first);
      assert.ok(last.t >= 1 && last.t <= rate.windowSeconds, `t=${last.t}`);
      assert.ok(last.r < rate.limit, `r=${last.r} after a request`);
      if (rate.limit > 50) return;
      for (let i = 0; i < 2 * rate.limit; i++) {
        const answer = await c.send(get(c, "/pets"));
        const now = rateOf(answer);
        if (answer.status === 429) {
          expectError(answer, 429, "rate_limited");
          assert.equal(last.r, 0, "refused only once none was left");
          assert.equal(now.r, 0);
          assert.equal(answer.headers["retry-after"], String(now.t), "Retry-After is the window's rest");
          assert.equal(answer.headers["ratelimit-policy"], `"default";q=${rate.limit};w=${rate.windowSeconds}`);
          return;
        }
        assert.equal(answer.status, 200);
        if (now.r !== last.r - 1) assert.ok(now.t > last.t, `r went from ${last.r} to ${now.r} in one window`);
        last = now;
      }
      assert.ok(false, `no 429 after ${2 * rate.limit} requests`);
    },
  },
  {
    name: "scopes: a key with pets:read only lists and gets; its create is 403 insufficient_scope naming pets:write, and stores nothing",
    async run(c) {
      const reader = c.readOnlyKey;
      if (reader === undefined) {
        // No read-only key given: the target's key holds every scope.
        assert.equal((await c.send(post(c, JSON.stringify({ name: "Rex", categoryId: 1 })))).status, 201);
        assert.equal((await c.send(get(c, "/pets"))).status, 200);
        return;
      }
      await c.seed(1);
      const headers = { authorization: `Bearer ${reader}` };
      const page = await c.send(get(c, "/pets", headers));
      assert.equal(page.status, 200);
      assert.equal(JSON.parse(page.body).length, 1);
      assert.equal((await c.send(get(c, "/pets/1", headers))).status, 200);
      const refused = await c.send(
        post(c, JSON.stringify({ name: "Tom", categoryId: 1 }), { ...headers, "content-type": "application/json" }),
      );
      expectError(refused, 403, "insufficient_scope");
      expectHeaders(refused, { "www-authenticate": CHALLENGE_WRITE });
      assert.equal(JSON.parse((await c.send(get(c, "/pets"))).body).length, 1, "nothing stored");
    },
  },
];

/** One conformance case: `run(target)` resolves when the target keeps the rule, rejects otherwise. */
export interface ConformanceCase {
  name: string;
  run(target: ConformanceTarget): Promise<void>;
}

/**
 * The conformance cases every adapter of this package passes, for any test runner:
 *
 * @example
 *   for (const c of conformanceCases()) test(c.name, () => c.run({ basePath: "/v1", key, reset, url }));
 */
export function conformanceCases(): ConformanceCase[] {
  return [...CASES, ...CACHING_CASES].map(({ name, run }) => ({
    name,
    run: (target: ConformanceTarget) => onTarget(target, run),
  }));
}
