/**
 * The standalone server as an operator meets it: started as a process with environment
 * variables, read through its start-up line and its logs, stopped with SIGTERM.
 */
import { connect } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ConfigError, startServer } from "../../server/index.ts";
import type { Child } from "../support/server-child.ts";
import { jsonLines, spawnServer, startedUrl } from "../support/server-child.ts";

const KEY = "s3cret-key-for-logs-0123456789";
const children: Child[] = [];
function start(env: Record<string, string>, args: string[] = []) {
  const child = spawnServer({ PORT: "0", ...env }, args);
  children.push(child);
  return child;
}

async function stop(child: Child): Promise<number | null> {
  child.process.kill("SIGTERM");
  return child.exited();
}

test.after.each(async () => {
  for (const child of children.splice(0)) await child.stop();
});

test("server: with PORT=0 the start-up line names the real port, where the API answers", async () => {
  const child = start({ PETSTORE_API_KEYS: KEY });
  const url = await startedUrl(child);
  assert.is.not(url.port, "0");
  assert.is(url.pathname, "/v1");
  const res = await fetch(`${url.href}/pets`, { headers: { authorization: `Bearer ${KEY}` } });
  assert.is(res.status, 200);
  assert.is(await res.text(), "[]");
  assert.is(await stop(child), 0);
});

test("server: PETSTORE_IDEMPOTENCY_TTL is the retention the store keeps and its OpenAPI document publishes; a keyed retry replays", async () => {
  const child = start({ PETSTORE_API_KEYS: KEY, PETSTORE_IDEMPOTENCY_TTL: "90" });
  const url = await startedUrl(child);
  const doc = (await (await fetch(`${url.href}/openapi.json`)).json()) as {
    components: { parameters: Record<string, { description: string }> };
  };
  assert.match(doc.components.parameters["Idempotency-Key"]?.description ?? "", /kept for 90 seconds/);
  const post = () =>
    fetch(`${url.href}/pets`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "idempotency-key": "order-1" },
      body: '{"name":"Rex","categoryId":1}',
    });
  const first = await post();
  const retry = await post();
  assert.is(first.status, 201);
  assert.is(retry.status, 201);
  assert.is(retry.headers.get("idempotent-replayed"), "true");
  assert.is(await retry.text(), await first.text());
  assert.is(await stop(child), 0);
});

test("server: without PETSTORE_API_KEYS a random key is generated, printed at start-up with how to set one, and works", async () => {
  const child = start({});
  const url = await startedUrl(child);
  const line = await child.line(/generated API key/);
  assert.match(line, /PETSTORE_API_KEYS/);
  const key = /generated API key for this run: (\S+)/.exec(line)?.[1] ?? "";
  assert.ok(key.length >= 24, "a long random key");
  const res = await fetch(`${url.href}/pets`, { headers: { authorization: `Bearer ${key}` } });
  assert.is(res.status, 200);
  assert.is((await fetch(`${url.href}/pets`, { headers: { authorization: "Bearer guess" } })).status, 401);
  assert.is(await stop(child), 0);
  assert.is(child.stdout().split(key).length - 1, 2, "the key appears twice: its line and the ready curl");
  assert.not.ok(child.stderr().includes(key));
  // Another start gets another key.
  const again = start({});
  const otherKey = /run: (\S+)/.exec(await again.line(/generated API key/))?.[1];
  assert.is.not(otherKey, key);
});

test("server: after the listening line, a curl to paste: with the generated key; a key from PETSTORE_API_KEYS never printed", async () => {
  const generated = start({});
  const url = await startedUrl(generated);
  const key = /generated API key for this run: (\S+)/.exec(await generated.line(/generated API key/))?.[1] ?? "";
  await generated.line(/^Try it: /);
  const lines = generated.stdout().split("\n");
  const listening = lines.findIndex((line) => line.includes("listening on"));
  assert.is(lines[listening + 1], `Try it: curl -H "Authorization: Bearer ${key}" ${url.href}/pets`);
  const res = await fetch(`${url.href}/pets`, { headers: { authorization: `Bearer ${key}` } });
  assert.is(res.status, 200, "the curl's request is answered");
  const given = start({ PETSTORE_API_KEYS: KEY });
  const givenUrl = await startedUrl(given);
  const tryLine = await given.line(/^Try it: /);
  assert.is(tryLine, `Try it: curl -H "Authorization: Bearer <a key of PETSTORE_API_KEYS>" ${givenUrl.href}/pets`);
  assert.is(await stop(given), 0);
  assert.not.ok(given.stdout().includes(KEY));
});

test("startServer: a partial config (from JavaScript) takes the defaults: 127.0.0.1, memory, /v1, log level info", async () => {
  const server = await startServer({ apiKeys: [KEY], port: 0 } as never);
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    assert.equal((await server.store.listPets()).pets, []);
  } finally {
    await server.close();
  }
});

test("startServer: a config without apiKeys is refused with a ConfigError that names apiKeys", async () => {
  for (const config of [{ port: 0 }, { apiKeys: [], port: 0 }, undefined]) {
    const error = await startServer(config as never).catch((e: unknown) => e);
    assert.instance(error, ConfigError, String(error));
    assert.match((error as Error).message, /apiKeys|config must be an object/, JSON.stringify(config));
  }
});

test("server: /healthz and /readyz answer 200 JSON without a key, outside the base path", async () => {
  const child = start({ PETSTORE_API_KEYS: KEY });
  const url = await startedUrl(child);
  for (const [path, body] of [
    ["/healthz", { status: "ok" }],
    ["/readyz", { status: "ready" }],
  ] as const) {
    const res = await fetch(new URL(path, url));
    assert.is(res.status, 200, path);
    assert.is(res.headers.get("content-type"), "application/json; charset=utf-8");
    assert.is(res.headers.get("cache-control"), "no-store");
    assert.equal(await res.json(), body);
  }
  const post = await fetch(new URL("/healthz", url), { method: "POST" });
  assert.is(post.status, 405);
  assert.is(post.headers.get("allow"), "GET, HEAD");
  assert.is(((await post.json()) as { code: string }).code, "method_not_allowed");
  assert.is((await fetch(new URL("/v1/healthz", url))).status, 404, "not under the base path");
  assert.is(await stop(child), 0);
});

test("server: flags --port, --base-path and --log-level override the environment", async () => {
  const child = start({ PETSTORE_API_KEYS: KEY, PORT: "not-a-port", PETSTORE_BASE_PATH: "/nope" }, [
    "--port",
    "0",
    "--base-path=/api/v2",
    "--log-level",
    "warn",
  ]);
  const url = await startedUrl(child);
  assert.is(url.pathname, "/api/v2");
  const res = await fetch(`${url.href}/pets`, { headers: { authorization: `Bearer ${KEY}` } });
  assert.is(res.status, 200);
  const created = await fetch(`${url.href}/pets`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: '{"name":"Rex","categoryId":1}',
  });
  assert.is(created.headers.get("location"), "/api/v2/pets/1");
  assert.is(await stop(child), 0);
  assert.equal(
    jsonLines(child.stdout()).filter((l) => l.msg === "request"),
    [],
    "LOG_LEVEL warn: no request lines",
  );
});

test("server: one JSON log line per request: method, path without the query, status, ms and request id", async () => {
  const child = start({ PETSTORE_API_KEYS: KEY });
  const url = await startedUrl(child);
  const auth = { authorization: `Bearer ${KEY}` };
  const listed = await fetch(`${url.href}/pets?limit=5&status=sold`, {
    headers: { ...auth, "x-request-id": "trace-1" },
  });
  const missing = await fetch(`${url.href}/pets/42?secret=value`, { headers: auth });
  await fetch(new URL("/healthz", url));
  assert.is(await stop(child), 0);
  const requests = jsonLines(child.stdout()).filter((l) => l.msg === "request");
  assert.is(requests.length, 3);
  const [first, second, third] = requests;
  assert.equal(
    { method: first?.method, path: first?.path, status: first?.status, reqId: first?.reqId },
    { method: "GET", path: "/v1/pets", status: 200, reqId: "trace-1" },
  );
  assert.is(listed.headers.get("x-request-id"), "trace-1");
  assert.equal([second?.path, second?.status], ["/v1/pets/42", 404]);
  assert.is(second?.reqId, missing.headers.get("x-request-id"), "the generated id is the one answered");
  assert.equal([third?.path, third?.status], ["/healthz", 200]);
  for (const l of requests) {
    assert.type(l.ms, "number");
    assert.ok((l.ms as number) >= 0);
  }
  assert.not.ok(child.stdout().includes("sold") || child.stdout().includes("value"), "no query value is logged");
});

test("server: a request whose client went away before the answer is logged once, marked aborted", async () => {
  const child = start({ PETSTORE_API_KEYS: KEY });
  const url = await startedUrl(child);
  // A POST announcing 100 bytes that sends 10 and hangs up: the core answers invalid_body to nobody.
  await new Promise<void>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nX-Request-Id: cut-1\r\n` +
          "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n" +
          '{"name":"R',
        () => setTimeout(() => socket.destroy(), 100),
      );
    });
    socket.on("close", () => resolve());
    socket.on("error", reject);
  });
  const answered = await fetch(`${url.href}/pets`, {
    headers: { authorization: `Bearer ${KEY}`, "x-request-id": "ok-1" },
  });
  assert.is(answered.status, 200);
  assert.is(await stop(child), 0);
  const requests = jsonLines(child.stdout()).filter((l) => l.msg === "request");
  const cut = requests.filter((l) => l.reqId === "cut-1");
  assert.is(cut.length, 1, "logged once");
  assert.equal([cut[0]?.method, cut[0]?.path, cut[0]?.aborted], ["POST", "/v1/pets", true]);
  const ok = requests.filter((l) => l.reqId === "ok-1");
  assert.equal([ok.length, ok[0]?.status, ok[0]?.aborted], [1, 200, undefined], "an answered request is not aborted");
});

test("server: log lines are valid JSON whatever the path holds (quotes, backslashes, escapes)", async () => {
  const child = start({ PETSTORE_API_KEYS: KEY });
  const url = await startedUrl(child);
  // Node's parser lets `"` and `\` through in a request target: the log line must escape them.
  const paths = ['/v1/pets/"quoted"', "/v1/pets/back\\slash", "/v1/p%C3%A9ts/x", '/"\\"'];
  for (const path of paths) {
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.end(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nConnection: close\r\n\r\n`);
      });
      socket.resume();
      socket.on("close", () => resolve());
      socket.on("error", reject);
    });
  }
  assert.is(await stop(child), 0);
  const logged = jsonLines(child.stdout())
    .filter((l) => l.msg === "request")
    .map((l) => l.path);
  assert.equal(logged, paths, "every line parses, paths kept exactly");
});

test("server: no key, whole or in part, ever appears in a log line", async () => {
  const wrong = "wrong-key-that-must-not-be-logged";
  const child = start({ PETSTORE_API_KEYS: `${KEY},other-key-0987654321` });
  const url = await startedUrl(child);
  await fetch(`${url.href}/pets`, { headers: { authorization: `Bearer ${KEY}` } });
  await fetch(`${url.href}/pets`, { headers: { authorization: `Bearer ${wrong}` } });
  await fetch(`${url.href}/pets?api_key=${KEY}`);
  assert.is(await stop(child), 0);
  const logs = child.stdout() + child.stderr();
  assert.ok(logs.includes('"msg":"request"'), "requests were logged");
  for (const secret of [KEY, "other-key-0987654321", wrong]) {
    for (let i = 0; i + 8 <= secret.length; i += 4) {
      const part = secret.slice(i, i + 8);
      assert.not.ok(logs.includes(part), `"${part}" of a key is in the logs`);
    }
  }
});

test.run();
