/**
 * Starting and closing the standalone server in-process leaves nothing behind: after any number
 * of `startServer()` / `close()` cycles, the process has the same `exit` listeners and the same
 * active handles as before (a test suite that starts many servers gets no
 * MaxListenersExceededWarning and no handle that keeps it alive).
 */

import { closeSync, openSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startServer } from "../../server/index.ts";
import { LineWriter } from "../../server/line-writer.ts";
import { createLogger } from "../../server/logger.ts";

const KEY = "lifecycle-key-0123456789";
const CYCLES = 20;

/** The active resources as a sorted list (e.g. ["FSReqCallback", "TCPServerWrap"]). */
const resources = () => process.getActiveResourcesInfo().sort();

/** Waits (bounded) until the active resources are `expected` again: a closed socket goes on the next ticks. */
async function settled(expected: string[]): Promise<string[]> {
  let now = resources();
  for (let i = 0; i < 100 && JSON.stringify(now) !== JSON.stringify(expected); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    now = resources();
  }
  return now;
}

test(`server: ${CYCLES} startServer()/close() cycles leave the process's exit listeners and active handles as they were`, async () => {
  // One cycle first, so that what loads once (modules, pino's worker-free setup) is not counted.
  const config = {
    port: 0,
    host: "127.0.0.1",
    storage: "memory",
    basePath: "/v1",
    logLevel: "warn",
    apiKeys: [KEY],
  } as const;
  await (await startServer({ ...config, apiKeys: [KEY] })).close();
  const exitListeners = process.listenerCount("exit");
  await new Promise((resolve) => setTimeout(resolve, 100)); // the first server's handles close on later ticks
  const before = resources();
  assert.not.ok(before.includes("TCPServerWrap"), `the first server is closed (${before.join(", ")})`);
  for (let i = 0; i < CYCLES; i++) {
    const server = await startServer({ ...config, apiKeys: [KEY] });
    const res = await fetch(`${server.url}/pets`, { headers: { authorization: `Bearer ${KEY}`, connection: "close" } });
    assert.is(res.status, 200);
    await res.text();
    await server.close();
  }
  assert.is(process.listenerCount("exit"), exitListeners, "no exit listener left behind");
  assert.equal(await settled(before), before, "no active handle left behind");
});

test("log writer: it holds an exit listener only while lines wait to be written", async () => {
  const fd = openSync("/dev/null", "w");
  try {
    const base = process.listenerCount("exit");
    const writer = new LineWriter(fd);
    assert.is(process.listenerCount("exit"), base, "an idle writer holds none");
    writer.write("one line\n");
    assert.is(process.listenerCount("exit"), base + 1, "a waiting line is written at exit if need be");
    await writer.end();
    assert.is(process.listenerCount("exit"), base, "none once everything is written");
    writer.write("a line after end()\n");
    assert.is(process.listenerCount("exit"), base + 1);
    await writer.end();
    assert.is(process.listenerCount("exit"), base);
  } finally {
    closeSync(fd);
  }
});

test("log writer: loggers that are never flushed (silent ones, say) leave no exit listener", () => {
  const base = process.listenerCount("exit");
  for (let i = 0; i < 20; i++) createLogger("silent").info("never written");
  assert.is(process.listenerCount("exit"), base);
});

test.run();
