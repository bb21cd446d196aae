/**
 * A child process of the rate limit test: a store with a rate limit on the storage named on the
 * command line, says "ready", waits for "go" on stdin (so that every process asks at once), sends
 * its requests with one key, 8 in flight, prints `{ "admitted": n, "refused": n, "windows": [...] }`.
 *
 * Run: node --import tsx test/storage/rate-worker.ts <storage spec> <requests> <limit> <window seconds>
 */
import { once } from "node:events";
import { createPetStore } from "../../lib/index.ts";
import { openStorage } from "../../lib/storage/open.ts";

const [spec, requestsArg, limitArg, windowArg] = process.argv.slice(2);
const requests = Number(requestsArg);
const rateLimit = { limit: Number(limitArg), windowSeconds: Number(windowArg) };
if (spec === undefined || !Number.isSafeInteger(requests)) {
  console.error("usage: rate-worker.ts <storage spec> <requests> <limit> <window seconds>");
  process.exit(2);
}

const errors: unknown[] = [];
const store = createPetStore({
  storage: await openStorage(spec, { operationTimeoutMs: 10_000 }),
  auth: ["rate-test-key"],
  rateLimit,
  onError: (error) => errors.push(error),
});
process.stdout.write("ready\n");
process.stdin.setEncoding("utf8");
let input = "";
while (!input.includes("go")) {
  const [chunk] = await once(process.stdin, "data");
  input += chunk;
}
process.stdin.pause();

const windows = new Set<number>();
let admitted = 0;
let refused = 0;
let next = 0;
async function lane(): Promise<void> {
  while (next < requests) {
    next++;
    windows.add(Math.floor(Date.now() / (rateLimit.windowSeconds * 1000)));
    const r = await store.handle({
      method: "GET",
      path: "/v1/pets",
      headers: { authorization: "Bearer rate-test-key" },
    });
    if (r.status === 200) admitted++;
    else if (r.status === 429) refused++;
    else throw new Error(`unexpected ${r.status}: ${String(r.body)}`);
  }
}
await Promise.all(Array.from({ length: 8 }, lane));
await store.close();
if (errors.length > 0) throw errors[0];
process.stdout.write(`${JSON.stringify({ admitted, refused, windows: [...windows] })}\n`);
