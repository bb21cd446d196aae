/**
 * A child process of the cross-process idempotency test: opens the storage named on the command
 * line, says "ready", waits for "go" on stdin, then creates pets 0..count-1, each with the key
 * `key-<i>` (same payload in every process), 8 calls in flight, trying again while the key is in
 * use. Prints one JSON line `{ "ids": [...], "created": n }` and exits.
 *
 * Run: node --import tsx test/storage/once-worker.ts <storage spec> <count>
 */
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { fingerprintOf } from "../../lib/idempotency.ts";
import type { PetStatus } from "../../lib/schemas.ts";
import { PET_STATUSES } from "../../lib/schemas.ts";
import { openStorage } from "../../lib/storage/open.ts";

const [spec, countArg] = process.argv.slice(2);
const count = Number(countArg);
if (spec === undefined || !Number.isSafeInteger(count)) {
  console.error("usage: once-worker.ts <storage spec> <count>");
  process.exit(2);
}

const storage = await openStorage(spec, { operationTimeoutMs: 10_000 });
if (storage.createOnce === undefined) throw new Error("no createOnce");
const createOnce = storage.createOnce.bind(storage);
process.stdout.write("ready\n");
process.stdin.setEncoding("utf8");
let input = "";
while (!input.includes("go")) {
  const [chunk] = await once(process.stdin, "data");
  input += chunk;
}
process.stdin.pause();

const ids: number[] = new Array(count);
let created = 0;
let next = 0;
async function lane(): Promise<void> {
  while (next < count) {
    const i = next++;
    const pet = { name: `pet-${i}`, categoryId: 1 + (i % 7), status: PET_STATUSES[i % 3] as PetStatus };
    const now = Date.now();
    const record = {
      scope: "caller",
      key: `key-${i}`,
      fingerprint: fingerprintOf(pet),
      now,
      expiresAt: now + 3_600_000,
    };
    for (let attempt = 0; ; attempt++) {
      const result = await createOnce(pet, record);
      if ("pet" in result) {
        ids[i] = result.pet.id;
        if (!result.replayed) created++;
        break;
      }
      if (result.conflict !== "in_use" || attempt > 200) throw new Error(`key-${i}: ${result.conflict}`);
      await sleep(5);
    }
  }
}
await Promise.all(Array.from({ length: 8 }, lane));
await storage.close();
process.stdout.write(`${JSON.stringify({ ids, created })}\n`);
