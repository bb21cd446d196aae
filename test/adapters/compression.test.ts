/**
 * The Node adapter's compression (adapters/compression.ts, contract 1.4), over a real socket: answers
 * of 1 KiB or more in the client's best coding of zstd, br and gzip, each with its own ETag that a
 * 304 honours; `Vary: Accept-Encoding`; nothing below the threshold; `no-transform` honoured;
 * `compression: false` turns it off. (Every backend: test/storage/validators.test.ts.)
 */
import http from "node:http";
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from "node:zlib";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { NodeHandlerOptions } from "../../adapters/node-http.ts";
import { createNodeHandler } from "../../adapters/node-http.ts";
import type { PetStoreOptions } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";

const KEY = "compression-key";
const auth = { authorization: `Bearer ${KEY}` };

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** As sent. */
  raw: Buffer;
  /** Decoded by its Content-Encoding. */
  text: string;
}

function decode(coding: string | undefined, raw: Buffer): Buffer {
  if (coding === undefined || raw.length === 0) return raw;
  if (coding === "gzip") return gunzipSync(raw);
  if (coding === "br") return brotliDecompressSync(raw);
  if (coding === "zstd") return zstdDecompressSync(raw);
  throw new Error(`unexpected coding ${coding}`);
}

/** A store with `pets` pets behind the Node adapter on a free port; `run` gets a way to ask it. */
async function serve(
  pets: number,
  run: (ask: (path: string, headers?: Record<string, string>, method?: string) => Promise<Answer>) => Promise<void>,
  storeOptions: Partial<PetStoreOptions> = {},
  options: NodeHandlerOptions = {},
) {
  const store = createPetStore({ auth: [KEY], ...storeOptions });
  for (let i = 1; i <= pets; i++) await store.createPet({ name: `pet-${i}`, categoryId: (i % 7) + 1 });
  const server = http.createServer(createNodeHandler(store, options));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const ask = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    new Promise<Answer>((resolve, reject) => {
      const req = http.request({ port, host: "127.0.0.1", path, method, headers: { ...auth, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const raw = Buffer.concat(chunks);
          const coding = res.headers["content-encoding"];
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            raw,
            text: decode(coding, raw).toString("utf8"),
          });
        });
      });
      req.on("error", reject);
      req.end();
    });
  try {
    await run(ask);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await store.close();
  }
}

const PAGE = "/v1/pets?limit=100";

test("compression: a page of 100 pets in zstd, br or gzip decodes byte-identical to the plain one, far smaller, with its length", async () => {
  await serve(100, async (ask) => {
    const plain = await ask(PAGE);
    assert.is(plain.headers["content-encoding"], undefined);
    for (const coding of ["zstd", "br", "gzip"]) {
      const coded = await ask(PAGE, { "accept-encoding": coding });
      assert.is(coded.headers["content-encoding"], coding);
      assert.ok(decode(coding, coded.raw).equals(plain.raw), `${coding}: byte-identical`);
      assert.is(coded.headers["content-length"], String(coded.raw.length));
      assert.ok(coded.raw.length * 4 < plain.raw.length, `${coding}: ${coded.raw.length} of ${plain.raw.length} bytes`);
    }
  });
});

test("compression: each coding's answer has its own strong ETag (the plain tag with -coding), and Vary: Accept-Encoding", async () => {
  await serve(100, async (ask) => {
    const plain = await ask(PAGE);
    const tag = plain.headers.etag as string;
    assert.is(plain.headers.vary, "Accept-Encoding", "the plain answer varies too");
    for (const coding of ["zstd", "br", "gzip"]) {
      const coded = await ask(PAGE, { "accept-encoding": coding });
      assert.is(coded.headers.etag, `${tag.slice(0, -1)}-${coding}"`);
      assert.is(coded.headers.vary, "Accept-Encoding");
    }
  });
});

test("compression: the client's best coding is used: zstd over br over gzip, unless its q-values say otherwise", async () => {
  await serve(100, async (ask) => {
    const pick = async (accept: string) => (await ask(PAGE, { "accept-encoding": accept })).headers["content-encoding"];
    assert.is(await pick("gzip, deflate, br, zstd"), "zstd");
    assert.is(await pick("gzip, br"), "br");
    assert.is(await pick("br;q=0.4, gzip;q=0.9"), "gzip");
    assert.is(await pick("identity"), undefined);
    assert.is(await pick("deflate"), undefined);
  });
});

test("compression: a coded answer's own tag (also weakened by a proxy, or in a list) answers 304 naming it, without a length", async () => {
  await serve(100, async (ask) => {
    const br = { "accept-encoding": "br" };
    const coded = await ask(PAGE, br);
    const tag = coded.headers.etag as string;
    for (const held of [tag, `W/${tag}`, `"x", ${tag}`]) {
      const again = await ask(PAGE, { ...br, "if-none-match": held });
      assert.is(again.status, 304, held);
      assert.is(again.headers.etag, tag, held);
      assert.is(again.headers.vary, "Accept-Encoding");
      assert.is(again.headers["content-length"], undefined, "a 304 says no length");
      assert.is(again.raw.length, 0);
    }
    const any = await ask(PAGE, { ...br, "if-none-match": "*" });
    assert.is(any.status, 304);
    assert.is(any.headers.etag, tag, "*: the answer the client would get");
  });
});

test("compression: a client that holds the plain answer is told it is still good (its tag), not sent the coded one", async () => {
  await serve(100, async (ask) => {
    const plain = await ask(PAGE);
    const again = await ask(PAGE, { "accept-encoding": "br", "if-none-match": plain.headers.etag as string });
    assert.is(again.status, 304);
    assert.is(again.headers.etag, plain.headers.etag);
    assert.is(again.headers["content-length"], undefined, "a 304 says no length");
  });
});

test("compression: another coding's tag is another answer: 200 in the coding the client accepts now", async () => {
  await serve(100, async (ask) => {
    const gzip = await ask(PAGE, { "accept-encoding": "gzip" });
    const now = await ask(PAGE, { "accept-encoding": "br", "if-none-match": gzip.headers.etag as string });
    assert.is(now.status, 200);
    assert.is(now.headers["content-encoding"], "br");
    const changed = await ask("/v1/pets?limit=99", {
      "accept-encoding": "gzip",
      "if-none-match": gzip.headers.etag as string,
    });
    assert.is(changed.status, 200, "another page's tag");
  });
});

test("compression: HEAD says what its GET would (coding, tag, Vary) without compressing anything or a length", async () => {
  await serve(100, async (ask) => {
    const head = await ask(PAGE, { "accept-encoding": "gzip" }, "HEAD");
    const get = await ask(PAGE, { "accept-encoding": "gzip" });
    assert.is(head.status, 200);
    assert.is(head.raw.length, 0);
    assert.is(head.headers["content-encoding"], "gzip");
    assert.is(head.headers.etag, get.headers.etag);
    assert.is(head.headers.vary, get.headers.vary);
    assert.is(head.headers["content-length"], undefined);
  });
});

test("compression: below 1 KiB nothing is compressed (a pet, a small page, an error), whatever the client accepts", async () => {
  await serve(10, async (ask) => {
    const all = { "accept-encoding": "zstd, br, gzip" };
    const pet = await ask("/v1/pets/1", all);
    const page = await ask("/v1/pets?limit=10", all);
    const missing = await ask("/v1/pets/999", all);
    for (const answer of [pet, page, missing]) {
      assert.is(answer.headers["content-encoding"], undefined, answer.text);
      assert.ok(Number(answer.headers["content-length"]) < 1024);
    }
    assert.is(pet.headers.vary, "Accept-Encoding", "a pet still says it varies (a proxy may code it)");
    assert.is(missing.headers.vary, undefined, "a small error never differs");
    assert.is(missing.headers.etag, undefined);
  });
});

test("compression: any answer of 1 KiB or more is compressed, the OpenAPI document included, and says Vary", async () => {
  await serve(0, async (ask) => {
    const doc = await ask("/v1/openapi.json", { "accept-encoding": "gzip" });
    assert.is(doc.status, 200);
    assert.is(doc.headers["content-encoding"], "gzip");
    assert.is(doc.headers.vary, "Accept-Encoding");
    assert.ok(JSON.parse(doc.text).openapi);
  });
});

test("compression: Cache-Control: no-transform is honoured: the store's noTransform answers go out as they are", async () => {
  await serve(
    100,
    async (ask) => {
      const page = await ask(PAGE, { "accept-encoding": "gzip" });
      assert.is(page.headers["content-encoding"], undefined);
      assert.is(page.headers["cache-control"], "private, no-cache, no-transform");
      assert.is(page.headers.vary, "Accept-Encoding", "the store's own Vary stays");
      const plainTag = page.headers.etag as string;
      assert.is((await ask(PAGE, { "accept-encoding": "gzip", "if-none-match": plainTag })).headers.etag, plainTag);
    },
    { cacheControl: { noTransform: true } },
  );
});

test("compression: createNodeHandler(store, { compression: false }) sends every answer as the store made it", async () => {
  await serve(
    100,
    async (ask) => {
      const page = await ask(PAGE, { "accept-encoding": "zstd, br, gzip" });
      assert.is(page.headers["content-encoding"], undefined);
      assert.is(page.headers.etag, (await ask(PAGE)).headers.etag);
      assert.is(JSON.parse(page.text).length, 100);
    },
    {},
    { compression: false },
  );
});

test("compression: the option is a boolean", () => {
  const store = createPetStore({ auth: [KEY] });
  assert.throws(
    () => createNodeHandler(store, { compression: "gzip" as never }),
    /createNodeHandler: compression must be true or false/,
  );
});

test.run();
