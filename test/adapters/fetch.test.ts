/** adapters/fetch.ts: createFetchHandler's options, fallback, body reading and HEAD, in process. */
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createFetchHandler } from "../../adapters/fetch.ts";
import { createPetStore } from "../../lib/index.ts";

const KEY = "fetch-key";
const AUTH = { authorization: `Bearer ${KEY}` };
const JSON_TYPE = { "content-type": "application/json" };
const ORIGIN = "http://127.0.0.1:8787";

/** A body stream that counts what was pulled from it and whether it was cancelled. */
function watchedBody(chunks: number, size = 16_384) {
  const seen = { pulls: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (seen.pulls === chunks) return controller.close();
        seen.pulls++;
        controller.enqueue(new Uint8Array(size).fill(32));
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 }, // nothing is pulled before someone reads
  );
  return { stream, seen };
}

function post(path: string, body: string | ReadableStream<Uint8Array>, headers: Record<string, string>): Request {
  return new Request(`${ORIGIN}${path}`, { method: "POST", body, headers, duplex: "half" } as RequestInit);
}

function handler() {
  return createFetchHandler(createPetStore({ auth: [KEY] }));
}

test("createFetchHandler: a missing store, bad options, an unknown option or a fallback that is not a function are clear TypeErrors", () => {
  const store = createPetStore({ auth: [KEY] });
  const bad: Array<[() => unknown, RegExp]> = [
    [() => createFetchHandler(undefined as never), /expected a store from createPetStore\(\)/],
    [() => createFetchHandler({} as never), /expected a store from createPetStore\(\)/],
    [() => createFetchHandler(store, null as never), /options must be an object/],
    [() => createFetchHandler(store, "x" as never), /options must be an object/],
    [() => createFetchHandler(store, { fallbak: () => new Response() } as never), /unknown option "fallbak"/],
    [() => createFetchHandler(store, { fallback: "/" as never }), /options\.fallback must be a function/],
  ];
  for (const [call, message] of bad) {
    assert.throws(call, (error: unknown) => error instanceof TypeError && message.test((error as Error).message));
  }
});

test("createFetchHandler: a request outside the base path goes to fallback(request), the same Request, and its Response is returned as is", async () => {
  const seen: Request[] = [];
  const own = new Response("home", { status: 200, headers: { "x-app": "1" } });
  const handle = createFetchHandler(createPetStore({ auth: [KEY] }), {
    fallback: (request) => {
      seen.push(request);
      return own;
    },
  });
  for (const path of ["/", "/v1x", "/v2/pets", "/healthz?x=/v1"]) {
    const request = new Request(`${ORIGIN}${path}`);
    assert.is(await handle(request), own, path);
    assert.is(seen.pop(), request, path);
  }
  // Under the base path (the base path itself, below it, with a query): the store's, not the fallback's.
  for (const path of ["/v1", "/v1/pets?limit=1", "/v1/nope"]) {
    const answer = await handle(new Request(`${ORIGIN}${path}`, { headers: AUTH }));
    assert.is(answer.headers.get("content-type"), "application/json; charset=utf-8", path);
  }
  assert.is(seen.length, 0);
});

test("createFetchHandler: the path and query come from the URL without its fragment; a fallback that throws rejects", async () => {
  const handle = createFetchHandler(createPetStore({ auth: [KEY] }), {
    fallback: () => {
      throw new Error("host failure");
    },
  });
  const page = await handle(new Request(`${ORIGIN}/v1/pets?limit=1#top`, { headers: AUTH }));
  assert.is(page.status, 200, "limit=1, not limit=1#top");
  const item = await handle(new Request(`${ORIGIN}/v1/pets/1#x`, { headers: AUTH }));
  assert.is(((await item.json()) as { code: string }).code, "pet_not_found", "petId 1, not 1#x");
  try {
    await handle(new Request(`${ORIGIN}/home`));
    assert.unreachable("should reject");
  } catch (error) {
    assert.is((error as Error).message, "host failure");
  }
});

test("createFetchHandler: without a fallback, a request outside the base path gets 404 not_found", async () => {
  const answer = await handler()(new Request(`${ORIGIN}/index.html`));
  assert.is(answer.status, 404);
  assert.equal(await answer.json(), { code: "not_found", message: "No such route.", status: 404 });
});

test("createFetchHandler: 401, 404 and 405 do not read a streamed body (not a byte pulled) and say Connection: close", async () => {
  const handle = handler();
  const cases: Array<[string, Record<string, string>, number]> = [
    ["/v1/pets", JSON_TYPE, 401],
    ["/v1/owners", { ...AUTH, ...JSON_TYPE }, 404],
    ["/v1/pets/1", { ...AUTH, ...JSON_TYPE }, 405],
  ];
  for (const [path, headers, status] of cases) {
    const { stream, seen } = watchedBody(10);
    const answer = await handle(post(path, stream, headers));
    assert.is(answer.status, status, path);
    assert.is(seen.pulls, 0, `${path}: nothing read`);
    assert.is(answer.headers.get("connection"), "close", path);
  }
});

test("createFetchHandler: a small unread body (Content-Length within the limit) is drained after an early answer, so the connection can be reused", async () => {
  const { stream, seen } = watchedBody(1, 100);
  const answer = await handler()(post("/v1/pets", stream, { ...JSON_TYPE, "content-length": "100" }));
  assert.is(answer.status, 401);
  assert.is(seen.pulls, 1, "read to its end");
  assert.is(answer.headers.get("connection"), null);
});

test("createFetchHandler: a Content-Length over the limit is refused 413 before a byte is read", async () => {
  const { stream, seen } = watchedBody(10);
  const headers = { ...AUTH, ...JSON_TYPE, "content-length": String(64 * 1024 + 1) };
  const answer = await handler()(post("/v1/pets", stream, headers));
  assert.is(answer.status, 413);
  assert.is(((await answer.json()) as { code: string }).code, "payload_too_large");
  assert.is(seen.pulls, 0);
  assert.is(answer.headers.get("connection"), "close");
});

test("createFetchHandler: a streamed body past the limit gives 413 as soon as it passes it, and the stream is cancelled", async () => {
  const { stream, seen } = watchedBody(1000); // 16 MB if read to the end
  const answer = await handler()(post("/v1/pets", stream, { ...AUTH, ...JSON_TYPE }));
  assert.is(answer.status, 413);
  assert.is(((await answer.json()) as { code: string }).code, "payload_too_large");
  assert.ok(seen.pulls <= 6, `read only past the 64 KiB limit (${seen.pulls} chunks of 16 KiB)`);
  assert.ok(seen.cancelled, "cancelled");
  assert.is(answer.headers.get("connection"), "close");
});

test("createFetchHandler: a body stream that fails mid-way (the client went away) gives 400 invalid_body, never a 500", async () => {
  let sent = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(new Error("connection reset"));
      sent = true;
      controller.enqueue(new TextEncoder().encode('{"name":'));
    },
  });
  const answer = await handler()(post("/v1/pets", stream, { ...AUTH, ...JSON_TYPE }));
  assert.is(answer.status, 400);
  assert.is(((await answer.json()) as { code: string }).code, "invalid_body");
});

test("createFetchHandler: a body something else already read (a framework's body parser) is 500 internal_error reported to onError saying to hand the request over first, never a 400", async () => {
  const errors: unknown[] = [];
  const handle = createFetchHandler(createPetStore({ auth: [KEY], onError: (error) => errors.push(error) }));
  const request = post("/v1/pets", '{"name":"Rex","categoryId":1}', { ...AUTH, ...JSON_TYPE });
  await request.json(); // as Hono's c.req.json() in a middleware would
  const answer = await handle(request);
  assert.is(answer.status, 500);
  assert.is(((await answer.json()) as { code: string }).code, "internal_error");
  assert.is(errors.length, 1);
  assert.match(String((errors[0] as Error).message), /already read .* hand the request to the pet store before/);
});

test("createFetchHandler: POST reads the body (bytes or a stream) and answers 201 with Location", async () => {
  const handle = handler();
  const first = await handle(post("/v1/pets", '{"name":"Rex","categoryId":1}', { ...AUTH, ...JSON_TYPE }));
  assert.is(first.status, 201);
  assert.is(first.headers.get("location"), "/v1/pets/1");
  assert.is(await first.text(), '{"id":1,"name":"Rex","categoryId":1,"status":"available"}');
  const bytes = new TextEncoder().encode('{"name":"Tom","categoryId":2}');
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 5) controller.enqueue(bytes.subarray(i, i + 5)); // split mid-character
      controller.close();
    },
  });
  const second = await handle(post("/v1/pets", stream, { ...AUTH, ...JSON_TYPE }));
  assert.is(second.status, 201);
  assert.is(((await second.json()) as { name: string }).name, "Tom");
});

test("createFetchHandler: HEAD answers as GET without a body, with the GET body's Content-Length", async () => {
  const handle = handler();
  await handle(post("/v1/pets", '{"name":"Rex","categoryId":1}', { ...AUTH, ...JSON_TYPE }));
  const get = await handle(new Request(`${ORIGIN}/v1/pets`, { headers: AUTH }));
  const head = await handle(new Request(`${ORIGIN}/v1/pets`, { method: "HEAD", headers: AUTH }));
  const body = await get.text();
  assert.is(head.status, 200);
  assert.is(head.body, null);
  assert.is(head.headers.get("content-length"), String(Buffer.byteLength(body)));
});

test("createFetchHandler: the handler given something that is not a Request rejects with a TypeError", async () => {
  const handle = handler();
  for (const bad of [undefined, null, "http://x/v1/pets", { url: "http://x/v1/pets" }]) {
    try {
      await handle(bad as never);
      assert.unreachable("should reject");
    } catch (error) {
      assert.instance(error, TypeError);
      assert.match((error as Error).message, /the handler takes a Request/);
    }
  }
});

test("adapters/fetch.ts is built from the package's public entry points only (lib/index.ts, lib/adapter.ts)", () => {
  const source = readFileSync(new URL("../../adapters/fetch.ts", import.meta.url), "utf8");
  const imports = [...source.matchAll(/^import [^;]*? from "([^"]+)";$/gms)].map((m) => m[1]);
  assert.ok(imports.length > 0);
  const entries = ["../lib/index.ts", "../lib/adapter.ts"];
  for (const from of imports) assert.ok(entries.includes(from ?? "") || /^\.\/[a-z-]+\.ts$/.test(from ?? ""), from);
});

test.run();
