/**
 * M1: heap bytes per stored pet costs in the memory backend, at 1,000,000 pets. Run with
 * --expose-gc: the growth of heapUsed + arrayBuffers (the id indexes live in ArrayBuffers) between
 * an empty store and a full one, after full collections, divided by the pets. Pets are created
 * through `createPet` as a client would, with names "Pet <n>" (5 to 11 characters).
 * Run by bench/run.ts; by hand: `node --expose-gc --import tsx bench/heap.ts [--quick]`.
 */
import { createPetStore } from "../lib/index.ts";
import { memoryStorage } from "../lib/storage/memory/index.ts";
import { finish } from "./child.ts";
import { benchPet } from "./fill.ts";
import { QUICK } from "./measure.ts";
import { row } from "./report.ts";

const PETS = QUICK ? 100_000 : 1_000_000;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("bench/heap.ts needs node --expose-gc");

function settledBytes(): number {
  for (let i = 0; i < 4; i++) (gc as () => void)();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

const before = settledBytes();
const store = createPetStore({ storage: memoryStorage(), auth: ["bench"] });
for (let start = 1; start <= PETS; start += 1000) {
  const batch: Promise<unknown>[] = [];
  for (let id = start; id < start + 1000 && id <= PETS; id++) {
    const { name, categoryId, status } = benchPet(id);
    batch.push(store.createPet({ name, categoryId, status }));
  }
  await Promise.all(batch);
}
const after = settledBytes();
// Reading the last pet keeps the store alive (and proves it holds what was written).
const last = await store.getPet(PETS);
if (last.name !== benchPet(PETS).name) throw new Error(`M1: pet ${PETS} reads back as ${JSON.stringify(last)}`);
await store.close();

finish([
  row({
    id: "M1",
    scenario: "memory, heap a stored pet",
    ours: (after - before) / PETS,
    baseline: null,
    unit: "bytes/pet",
    target: { on: "ours", op: "<=", value: 400 },
    note: `${PETS.toLocaleString("en-US")} pets; heapUsed + arrayBuffers growth, after full GCs`,
  }),
]);
