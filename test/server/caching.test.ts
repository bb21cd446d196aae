/**
 * The standalone server's caching and compression settings (`PETSTORE_CACHE_*`, `PETSTORE_COMPRESSION`
 * and their flags, server/cache-settings.ts): read into the store's `cacheControl` option and the
 * Node adapter's `compression`, and what the server then answers.
 */
import http from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ServerConfig } from "../../server/config.ts";
import { ConfigError, completeConfig, loadConfig } from "../../server/config.ts";
import { startServer } from "../../server/index.ts";
import { createLogger } from "../../server/logger.ts";

const KEY = "caching-key";
const load = (env: Record<string, string>, argv: string[] = []) =>
  loadConfig({ PETSTORE_API_KEYS: KEY, ...env }, argv).config;

test("config: without PETSTORE_CACHE_* or PETSTORE_COMPRESSION the defaults hold (no field set)", () => {
  const config = load({});
  assert.is(config.cacheControl, undefined);
  assert.is(config.compression, undefined);
});

test("config: PETSTORE_CACHE_PET_MAX_AGE, _PAGE_MAX_AGE, _NO_TRANSFORM, _NO_STORE (or their flags) set the store's cacheControl", () => {
  assert.equal(load({ PETSTORE_CACHE_PET_MAX_AGE: "3600", PETSTORE_CACHE_PAGE_MAX_AGE: "60" }).cacheControl, {
    petMaxAge: 3600,
    pageMaxAge: 60,
  });
  assert.equal(load({ PETSTORE_CACHE_NO_TRANSFORM: "true" }).cacheControl, { noTransform: true });
  assert.equal(load({ PETSTORE_CACHE_NO_STORE: "on" }).cacheControl, { noStore: true });
  assert.equal(load({ PETSTORE_CACHE_PET_MAX_AGE: "5" }, ["--cache-pet-max-age", "7"]).cacheControl, { petMaxAge: 7 });
  assert.equal(load({}, ["--cache-no-transform", "yes", "--cache-page-max-age=0"]).cacheControl, {
    pageMaxAge: 0,
    noTransform: true,
  });
});

test("config: PETSTORE_COMPRESSION=off (or --compression off) turns compression off; on is the default", () => {
  assert.is(load({ PETSTORE_COMPRESSION: "off" }).compression, false);
  assert.is(load({}, ["--compression", "false"]).compression, false);
  assert.is(load({ PETSTORE_COMPRESSION: "on" }).compression, undefined);
});

test("config: bad caching values are a ConfigError naming the setting", () => {
  const cases: [Record<string, string>, string[], RegExp][] = [
    [{ PETSTORE_CACHE_PET_MAX_AGE: "-1" }, [], /^PETSTORE_CACHE_PET_MAX_AGE must be a whole number of seconds/],
    [{ PETSTORE_CACHE_PAGE_MAX_AGE: "1h" }, [], /^PETSTORE_CACHE_PAGE_MAX_AGE must be/],
    [
      {},
      ["--cache-pet-max-age", "31536001"],
      /^--cache-pet-max-age must be a whole number of seconds from 0 to 31536000/,
    ],
    [{ PETSTORE_CACHE_NO_TRANSFORM: "maybe" }, [], /^PETSTORE_CACHE_NO_TRANSFORM must be on or off/],
    [{ PETSTORE_COMPRESSION: "gzip" }, [], /^PETSTORE_COMPRESSION must be on or off/],
    [
      { PETSTORE_CACHE_NO_STORE: "true", PETSTORE_CACHE_PET_MAX_AGE: "60" },
      [],
      /^PETSTORE_CACHE_NO_STORE keeps nothing/,
    ],
    [{ PETSTORE_CACHE_PAGE_MAX_AGE: "60" }, ["--cache-no-store", "on"], /^--cache-no-store keeps nothing/],
  ];
  for (const [env, argv, message] of cases) {
    assert.throws(
      () => load(env, argv),
      (e: unknown) => e instanceof ConfigError && message.test((e as Error).message),
    );
  }
});

/** The headers of GET `path` (with the key and `headers`) from a server on `port`. */
function headersOf(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
    const req = http.request(
      { port, host: "127.0.0.1", path, headers: { authorization: `Bearer ${KEY}`, ...headers } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.headers));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function withServer(config: Partial<ServerConfig>, run: (port: number) => Promise<void>) {
  const server = await startServer(completeConfig({ port: 0, apiKeys: [KEY], logLevel: "silent", ...config }), {
    logger: createLogger("silent"),
  });
  try {
    for (let i = 0; i < 30; i++) await server.store.createPet({ name: `pet-${i}`, categoryId: 1 });
    await run(server.port);
  } finally {
    await server.close();
  }
}

test("server: by default a caller's pet is private, no-cache and a page of 1 KiB or more goes out compressed", async () => {
  await withServer({}, async (port) => {
    assert.is((await headersOf(port, "/v1/pets/1"))["cache-control"], "private, no-cache");
    const page = await headersOf(port, "/v1/pets?limit=30", { "accept-encoding": "br" });
    assert.is(page["content-encoding"], "br");
    assert.match(page.etag ?? "", /-br"$/);
  });
});

test("server: cacheControl and compression from the settings reach the answers", async () => {
  const settings = load({
    PETSTORE_CACHE_PET_MAX_AGE: "300",
    PETSTORE_CACHE_PAGE_MAX_AGE: "30",
    PETSTORE_COMPRESSION: "off",
  });
  await withServer({ cacheControl: settings.cacheControl, compression: settings.compression }, async (port) => {
    assert.is((await headersOf(port, "/v1/pets/1"))["cache-control"], "private, max-age=300");
    assert.is((await headersOf(port, "/v1/pets?limit=10"))["cache-control"], "private, max-age=30");
    assert.is((await headersOf(port, "/v1/pets?limit=50"))["cache-control"], "private, no-cache", "the last page");
    const page = await headersOf(port, "/v1/pets?limit=30", { "accept-encoding": "br" });
    assert.is(page["content-encoding"], undefined, "PETSTORE_COMPRESSION=off");
  });
});

test("server: PETSTORE_CACHE_NO_TRANSFORM says no-transform and nothing is compressed", async () => {
  await withServer({ cacheControl: load({ PETSTORE_CACHE_NO_TRANSFORM: "true" }).cacheControl }, async (port) => {
    const page = await headersOf(port, "/v1/pets?limit=30", { "accept-encoding": "gzip" });
    assert.is(page["cache-control"], "private, no-cache, no-transform");
    assert.is(page["content-encoding"], undefined);
  });
});

test.run();
