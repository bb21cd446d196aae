/** examples/fastify-embed: an existing Fastify application with its own routes, hook and 404, the pet store plugin at /v1. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { answerOf, runProgram } from "../support/program.ts";

test("examples/fastify-embed: the application's routes, JSON parser, hook and 404 work beside the plugin's /v1", async () => {
  const { code, stdout, stderr } = await runProgram(["examples/fastify-embed/server.ts", "--once"], { PORT: "0" });
  assert.is(code, 0, `exit code; stderr: ${stderr}`);
  assert.is(stderr, "");
  assert.match(
    stdout,
    /fastify app listening on http:\/\/127\.0\.0\.1:\d+ \(pet store at http:\/\/127\.0\.0\.1:\d+\/v1\)/,
  );

  // The application's own routes, parser, hook and 404 handler.
  assert.equal(answerOf(stdout, "GET / (application route)"), {
    status: 200,
    rest: '[x-shop: Happy Paws] {"shop":"Happy Paws","api":"/v1/pets"}',
  });
  assert.equal(answerOf(stdout, "POST /newsletter (application, JSON)"), {
    status: 200,
    rest: '{"subscribed":"ann@example.com"}',
  });
  assert.equal(answerOf(stdout, "GET /nope (application 404)"), {
    status: 404,
    rest: `{"error":"nothing here (the application's own 404)"}`,
  });
  // The pet store, with the contract's answers; the host's hook runs on its routes too.
  assert.equal(answerOf(stdout, "GET /v1/pets (no API key)"), {
    status: 401,
    rest: '{"code":"unauthorized","message":"A valid API key is required. Send the key as Authorization: Bearer <key>.","status":401}',
  });
  assert.equal(answerOf(stdout, "POST /v1/pets (API key)"), {
    status: 201,
    rest: '[location: /v1/pets/1] [x-shop: Happy Paws] {"id":1,"name":"Rex","categoryId":1,"status":"available"}',
  });
  assert.equal(answerOf(stdout, "POST /v1/pets (malformed JSON)"), {
    status: 400,
    rest: '{"code":"malformed_json","message":"The request body is not valid JSON.","status":400}',
  });
  assert.equal(answerOf(stdout, "GET /v1/pets (API key)"), {
    status: 200,
    rest: '[{"id":1,"name":"Rex","categoryId":1,"status":"available"}]',
  });
  assert.is(answerOf(stdout, "GET /v1/pets/%zz (API key)").status, 400);
  assert.match(answerOf(stdout, "GET /v1/pets/%zz (API key)").rest, /"code":"invalid_pet_id"/);
  assert.equal(answerOf(stdout, "DELETE /v1/pets (API key)").status, 405);
  assert.match(answerOf(stdout, "DELETE /v1/pets (API key)").rest, /^\[allow: GET, HEAD, POST\] /);
  assert.equal(answerOf(stdout, "GET /stats (application, in-process)"), {
    status: 200,
    rest: '{"petsOnFirstPage":1}',
  });
  assert.match(stdout, /\nstopped\n$/);
});

test.run();
