/** examples/express-embed: an existing Express application, the pet store mounted at /shop before express.json(). */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { answerOf, runProgram } from "../support/program.ts";

test("examples/express-embed: the store mounted at /shop serves /shop/v1 beside the application's routes and parser, without X-Powered-By", async () => {
  const { code, stdout, stderr } = await runProgram(["examples/express-embed/server.ts", "--once"], { PORT: "0" });
  assert.is(code, 0, `exit code; stderr: ${stderr}`);
  assert.is(stderr, "", "nothing reached onError");
  assert.match(stdout, /express app listening on http:\/\/127\.0\.0\.1:\d+ \(pet store at .*\/shop\/v1\)/);

  // The application's own answers are Express's (its banner included) ...
  assert.equal(answerOf(stdout, "GET / (application route)"), {
    status: 200,
    rest: '[x-powered-by: Express] {"shop":"Happy Paws","api":"/shop/v1/pets"}',
  });
  assert.equal(answerOf(stdout, "POST /shop/newsletter (application, JSON)"), {
    status: 200,
    rest: '{"subscribed":"ann@example.com"}',
  });
  // ... the pet store's are the contract's: no banner, Location with the mount path, its own body checks.
  assert.equal(answerOf(stdout, "GET /shop/v1/pets (no API key)"), {
    status: 401,
    rest: '[x-powered-by: null] {"code":"unauthorized","message":"A valid API key is required. Send the key as Authorization: Bearer <key>.","status":401}',
  });
  assert.equal(answerOf(stdout, "POST /shop/v1/pets (API key)"), {
    status: 201,
    rest: '[location: /shop/v1/pets/1] {"id":1,"name":"Rex","categoryId":1,"status":"available"}',
  });
  assert.equal(answerOf(stdout, "POST /shop/v1/pets (malformed JSON)"), {
    status: 400,
    rest: '{"code":"malformed_json","message":"The request body is not valid JSON.","status":400}',
  });
  assert.equal(answerOf(stdout, "GET /shop/v1/pets (API key)"), {
    status: 200,
    rest: '[{"id":1,"name":"Rex","categoryId":1,"status":"available"}]',
  });
  assert.equal(answerOf(stdout, "GET /shop/stats (application, in-process)"), {
    status: 200,
    rest: '{"petsOnFirstPage":1}',
  });
  assert.match(stdout, /\nstopped\n$/);
});

test.run();
