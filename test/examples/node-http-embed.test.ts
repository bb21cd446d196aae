/** examples/node-http-embed: an existing Node http server serving other paths, the pet store under /v1. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Program } from "../support/program.ts";
import { answerOf, runProgram, startProgram } from "../support/program.ts";

const programs: Program[] = [];
test.after.each(async () => {
  for (const program of programs.splice(0)) await program.kill();
});

test("examples/node-http-embed: the server's own paths go to its fallback, /v1 to the pet store", async () => {
  const { code, stdout, stderr } = await runProgram(["examples/node-http-embed/server.ts", "--once"], { PORT: "0" });
  assert.is(code, 0, `exit code; stderr: ${stderr}`);
  assert.is(stderr, "");
  assert.match(stdout, /node http server listening on http:\/\/127\.0\.0\.1:\d+ \(pet store at .*\/v1\)/);

  // The application's own routes, untouched.
  assert.equal(answerOf(stdout, "GET / (application route)"), {
    status: 200,
    rest: "Welcome to Happy Paws. The pet API lives under /v1.",
  });
  assert.equal(answerOf(stdout, "GET /health (application route)"), { status: 200, rest: '{"ok":true}' });
  assert.equal(answerOf(stdout, "GET /nope (application 404)"), {
    status: 404,
    rest: "Nothing here (the application's own 404 page).",
  });
  // The pet store under /v1, with the contract's answers.
  assert.is(answerOf(stdout, "GET /v1/pets (no API key)").status, 401);
  assert.equal(answerOf(stdout, "POST /v1/pets (API key)"), {
    status: 201,
    rest: '[location: /v1/pets/1] {"id":1,"name":"Tom","categoryId":2,"status":"pending"}',
  });
  assert.equal(answerOf(stdout, "GET /v1/pets?status=pending (API key)"), {
    status: 200,
    rest: '[{"id":1,"name":"Tom","categoryId":2,"status":"pending"}]',
  });
  assert.equal(answerOf(stdout, "GET /v1/pets/1 (API key, deprecated)"), {
    status: 200,
    rest: '[deprecation: @1795564800] [sunset: Thu, 05 Dec 2030 00:00:00 GMT] {"id":1,"name":"Tom","categoryId":2,"status":"pending"}',
  });
  // Under the base path, unknown routes are the pet store's (JSON 404), not the application's.
  assert.equal(answerOf(stdout, "GET /v1/nope (pet store 404)"), {
    status: 404,
    rest: '{"code":"not_found","message":"No such route.","status":404}',
  });
  assert.match(stdout, /\nstopped\n$/);
});

test("examples/node-http-embed: without --once it keeps serving, and SIGTERM stops it with exit 0", async () => {
  const program = startProgram(["examples/node-http-embed/server.ts"], { PORT: "0" });
  programs.push(program);
  const base = /listening on (http:\/\/\S+)/.exec(await program.line(/listening on/))?.[1];
  await program.line(/Serving until Ctrl-C/);
  const home = await fetch(`${base}/`);
  assert.is(home.status, 200);
  await home.text();
  const pets = await fetch(`${base}/v1/pets`, { headers: { authorization: "Bearer pets-api-key" } });
  assert.is(pets.status, 200);
  assert.is(await pets.text(), '[{"id":1,"name":"Tom","categoryId":2,"status":"pending"}]');
  program.child.kill("SIGTERM");
  assert.is(await program.exited(15_000), 0);
  assert.match(program.stdout(), /\nstopped\n$/);
});

test.run();
