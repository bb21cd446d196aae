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

/** How many of each kind of resource `list` holds. */
const countKinds = (list: string[]) => {
  const counts: Record<string, number> = {};
  for (const kind of list) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
};

/**
 * The kinds of active resource of which there are more now than in `before`, with both counts
 * (none: nothing left behind). The suite runs in one process: other files' handles (an unref'd
 * test server, say) may be there before and may close meanwhile, never counted as ours.
 */
function grownSince(before: string[]): string[] {
  const then = countKinds(before);
  return Object.entries(countKinds(resources()))
    .filter(([kind, n]) => n > (then[kind] ?? 0))
    .map(([kind, n]) => `${kind}: ${then[kind] ?? 0} -> ${n}`);
}

/** Waits (bounded) until no kind of resource outnumbers `before`: a closed socket goes on the next ticks. */
async function settled(before: string[]): Promise<string[]> {
  let grown = grownSince(before);
  for (let i = 0; i < 100 && grown.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    grown = grownSince(before);
  }
  return grown;
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
  const initial = resources();
  await (await startServer({ ...config, apiKeys: [KEY] })).close();
  const exitListeners = process.listenerCount("exit");
  assert.equal(await settled(initial), [], "the first server is closed");
  const before = resources();
  for (let i = 0; i < CYCLES; i++) {
    const server = await startServer({ ...config, apiKeys: [KEY] });
    const res = await fetch(`${server.url}/pets`, { headers: { authorization: `Bearer ${KEY}`, connection: "close" } });
    assert.is(res.status, 200);
    await res.text();
    await server.close();
  }
  assert.is(process.listenerCount("exit"), exitListeners, "no exit listener left behind");
  assert.equal(await settled(before), [], "no active handle left behind");
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
