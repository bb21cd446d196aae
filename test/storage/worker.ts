/**
 * A child process of the multi-process test: opens the storage named on the command line,
 * says "ready", waits for "go" on stdin (so that all workers create at the same time), creates
 * its pets with 16 calls in flight, prints one JSON line `{ "ids": [...] }` and exits.
 *
 * Run: node --import tsx test/storage/worker.ts <storage spec> <count> <worker number>
 */
import { once } from "node:events";
import type { PetStatus } from "../../lib/schemas.ts";
import { PET_STATUSES } from "../../lib/schemas.ts";
import { openStorage } from "../../lib/storage/open.ts";

const [spec, countArg, workerArg] = process.argv.slice(2);
const count = Number(countArg);
const worker = Number(workerArg);
if (spec === undefined || !Number.isSafeInteger(count) || !Number.isSafeInteger(worker)) {
  console.error("usage: worker.ts <storage spec> <count> <worker number>");
  process.exit(2);
}

const storage = await openStorage(spec, { operationTimeoutMs: 10_000 });
process.stdout.write("ready\n");
process.stdin.setEncoding("utf8");
let input = "";
while (!input.includes("go")) {
  const [chunk] = await once(process.stdin, "data");
  input += chunk;
}
process.stdin.pause();

const ids: number[] = new Array(count);
let next = 0;
async function lane(): Promise<void> {
  while (next < count) {
    const i = next++;
    const pet = await storage.create({
      name: `w${worker}-${i}`,
      categoryId: worker + 1,
      status: PET_STATUSES[i % 3] as PetStatus,
    });
    ids[i] = pet.id;
  }
}
await Promise.all(Array.from({ length: 16 }, lane));
await storage.close();
process.stdout.write(`${JSON.stringify({ ids })}\n`);
