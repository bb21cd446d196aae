/** examples/hapi-embed: an existing hapi application with its own routes and auth, the pet store at /v1. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { answerOf, runProgram } from "../support/program.ts";

test("examples/hapi-embed: host routes with their own auth and the pet store at /v1 work side by side", async () => {
  const { code, stdout, stderr } = await runProgram(["examples/hapi-embed/server.ts", "--once"], { PORT: "0" });
  assert.is(code, 0, `exit code; stderr: ${stderr}`);
  assert.is(stderr, "");
  assert.match(
    stdout,
    /hapi app listening on http:\/\/127\.0\.0\.1:\d+ \(pet store at http:\/\/127\.0\.0\.1:\d+\/v1\)/,
  );

  // The host's own routes, with the host's own strategy.
  assert.equal(answerOf(stdout, "GET / (host route, public)"), {
    status: 200,
    rest: '{"shop":"Happy Paws","api":"/v1/pets"}',
  });
  assert.equal(answerOf(stdout, "GET /admin/stats (no staff token)"), {
    status: 401,
    rest: '{"error":"staff token required"}',
  });
  // The pet store's routes, with its bearer keys: the host's default strategy does not apply to them ...
  const unauthorized =
    '{"code":"unauthorized","message":"A valid API key is required. Send the key as Authorization: Bearer <key>.","status":401}';
  assert.equal(answerOf(stdout, "GET /v1/pets (no API key)"), { status: 401, rest: unauthorized });
  assert.equal(answerOf(stdout, "POST /v1/pets (API key)"), {
    status: 201,
    rest: '{"id":1,"name":"Rex","categoryId":1,"status":"available"}',
  });
  assert.equal(answerOf(stdout, "GET /v1/pets (API key)"), {
    status: 200,
    rest: '[{"id":1,"name":"Rex","categoryId":1,"status":"available"}]',
  });
  // ... and the host's credentials do not open the pet store.
  assert.equal(answerOf(stdout, "GET /v1/pets (staff token, no API key)"), { status: 401, rest: unauthorized });
  // A host route reads the same store in-process.
  assert.equal(answerOf(stdout, "GET /admin/stats (staff token)"), {
    status: 200,
    rest: '{"user":"staff","petsOnFirstPage":1}',
  });
  assert.match(stdout, /\nstopped\n$/);
});

test.run();
