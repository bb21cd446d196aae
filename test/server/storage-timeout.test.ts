/**
 * `startServer({ storageTimeoutMs })`: the time a storage call may take before its request answers
 * 503 storage_unavailable (default 2 000 ms), for a backend far away. A bad value is a ConfigError
 * naming the setting; a frozen Redis behind a proxy of the test's own answers within the time given.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ConfigError, completeConfig } from "../../server/config.ts";
import { startServer } from "../../server/start.ts";
import { freePort } from "../faults/support.ts";
import { redisBackend } from "../storage/backends.ts";
import { REDIS_URL, RUN, serviceAvailable } from "../storage/services.ts";
import { tcpProxy } from "../support/tcp-proxy.ts";

const s = suite("server: storageTimeoutMs");
const KEY = "storage-timeout-key";

s("a storage time-out that is not a positive number of milliseconds is a ConfigError naming it", () => {
  for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, "500"]) {
    assert.throws(
      () => completeConfig({ apiKeys: [KEY], storageTimeoutMs: bad as number }),
      (e: unknown) => e instanceof ConfigError && /config\.storageTimeoutMs must be a positive number/.test(String(e)),
      `storageTimeoutMs ${String(bad)}`,
    );
  }
  assert.is(completeConfig({ apiKeys: [KEY], storageTimeoutMs: 250 }).storageTimeoutMs, 250);
});

if (serviceAvailable("redis", "storage time-out")) {
  s("a frozen Redis: the request answers 503 storage_unavailable once the time given has passed", async () => {
    const namespace = `${RUN}_stt`;
    const target = new URL(REDIS_URL);
    const proxy = tcpProxy(await freePort(), target.hostname, Number(target.port) || 6379);
    await proxy.start();
    const storage = `redis://127.0.0.1:${proxy.port}?namespace=${namespace}`;
    const server = await startServer(
      completeConfig({ port: 0, apiKeys: [KEY], logLevel: "silent", storage, storageTimeoutMs: 300 }),
    );
    try {
      const headers = { authorization: `Bearer ${KEY}` };
      assert.is((await fetch(`${server.url}/pets`, { headers })).status, 200);
      proxy.freeze();
      const started = performance.now();
      const response = await fetch(`${server.url}/pets`, { headers, signal: AbortSignal.timeout(10_000) });
      const ms = performance.now() - started;
      assert.is(response.status, 503);
      assert.is(((await response.json()) as { code: string }).code, "storage_unavailable");
      // The default (2 000 ms) would still be waiting: the store got the server's setting.
      assert.ok(ms >= 250 && ms < 1500, `answered after ${Math.round(ms)} ms`);
    } finally {
      proxy.thaw();
      await server.close();
      await proxy.cut();
      await redisBackend().cleanup([namespace]);
    }
  });
}

s.run();
