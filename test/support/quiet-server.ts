/**
 * The standalone server as the raw-socket suites start it (memory storage, a free loopback port,
 * no log), and the check each of their tests ends with: the server still serves.
 */
import * as assert from "uvu/assert";
import type { RunningServer, ServerConfig } from "../../server/index.ts";
import { startServer } from "../../server/index.ts";

/** Starts the server with `apiKey`; `extra` sets time-outs and the like. */
export function startQuietServer(apiKey: string, extra: Partial<ServerConfig> = {}): Promise<RunningServer> {
  return startServer({
    port: 0,
    host: "127.0.0.1",
    storage: "memory",
    basePath: "/v1",
    logLevel: "silent",
    apiKeys: [apiKey],
    ...extra,
  });
}

/** Asserts that the API at `url` still answers a page to `key` with 200. */
export async function assertStillServes(url: string, key: string, what = "the server"): Promise<void> {
  const res = await fetch(`${url}/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  assert.is(res.status, 200, `${what} still serves after the test`);
}
