/** Child of memory/heap.test.ts: fills memory storage with N pets and prints the heap growth. */
import { memoryStorage } from "../../../lib/storage/memory/index.ts";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");
const n = Number(process.argv[2] ?? 1_000_000);
const statuses = ["available", "pending", "sold"] as const;
gc();
const before = process.memoryUsage();
const storage = memoryStorage();
for (let i = 0; i < n; i++) {
  await storage.create({ name: `pet number ${i}`, categoryId: 1 + (i % 50), status: statuses[i % 3] ?? "available" });
}
gc();
const after = process.memoryUsage();
const last = await storage.get(n);
const page = await storage.list({ after: n - 5, limit: 10 });
process.stdout.write(
  `${JSON.stringify({
    bytes: after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers),
    last: last?.id,
    page: page.map((p) => p.id),
  })}\n`,
);
