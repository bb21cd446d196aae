/**
 * Child of request-id.test.ts: answers 2,000 batches of 1,024 requests, keeps the request id of
 * the last answer of each batch (as an audit log or an error tracker would) and prints the heap growth.
 */
import { createPetStore } from "../../lib/store.ts";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");
const batches = Number(process.argv[2] ?? 2000);
const store = createPetStore({ auth: ["a-key-of-the-test"], onError: () => {} });
// Unauthenticated: the cheapest answer, and it carries a request id as every answer does.
const request = { method: "GET", path: "/v1/pets/1", headers: {} };
const kept: string[] = [];
// A first batch outside the count: the code's own first allocations are not the ids'.
for (let i = 0; i < 1024; i++) await store.handle(request);
gc();
const before = process.memoryUsage();
for (let batch = 0; batch < batches; batch++) {
  let id = "";
  for (let i = 0; i < 1024; i++) id = (await store.handle(request)).headers["x-request-id"] ?? "";
  kept.push(id);
}
gc();
const after = process.memoryUsage();
process.stdout.write(
  `${JSON.stringify({
    bytes: after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers),
    kept: kept.length,
    distinct: new Set(kept).size,
    sample: kept[0],
  })}\n`,
);
