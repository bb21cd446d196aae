/**
 * S2: `createPet` in-process, 64 calls in flight, for one backend (argv[2]): creates a second.
 * A warm-up, then a bounded measurement; the pets are checked to be there afterwards.
 * Run by bench/run.ts; by hand: `npx tsx bench/create.ts memory [--quick]`.
 */
import { createPetStore } from "../lib/index.ts";
import { type BackendKind, type BenchStorage, openBench } from "./backends.ts";
import { cleanupOnInterrupt, finish } from "./child.ts";
import { concurrent, QUICK, skipped } from "./measure.ts";
import { type Row, row, type Target } from "./report.ts";

const kind = process.argv[2] as BackendKind;
const IN_FLIGHT = 64;
const WARM_MS = QUICK ? 200 : 700;
const MEASURE_MS = QUICK ? 600 : 3000;
const TARGET: Target | null = kind === "memory" ? { on: "ours", op: ">=", value: 100_000 } : null;
const scenario = `${kind}, createPet, ${IN_FLIGHT} in flight`;

let bench: BenchStorage | undefined;
async function drop(): Promise<void> {
  const opened = bench;
  bench = undefined;
  await opened?.drop();
}

async function measure(): Promise<Row[]> {
  try {
    bench = await openBench(kind, "s2");
    const store = createPetStore({ storage: bench.storage, auth: ["bench"], operationTimeoutMs: 30_000 });
    const create = (i: number) => store.createPet({ name: `Pet ${i}`, categoryId: 1 + (i % 50) });
    await concurrent(create, IN_FLIGHT, WARM_MS);
    const perSecond = await concurrent(create, IN_FLIGHT, MEASURE_MS);
    const last = await store.createPet({ name: "Last", categoryId: 1 });
    const check = await store.getPet(last.id);
    if (check.name !== "Last") throw new Error(`S2 ${kind}: the last pet reads back as ${JSON.stringify(check)}`);
    return [
      row({
        id: "S2",
        scenario,
        ours: perSecond,
        baseline: null,
        unit: "ops/s",
        target: TARGET,
        note: `${(MEASURE_MS / 1000).toFixed(1)} s after a ${(WARM_MS / 1000).toFixed(1)} s warm-up`,
      }),
    ];
  } catch (error) {
    return skipped(error, [{ id: "S2", scenario, unit: "ops/s", target: TARGET }]);
  } finally {
    await drop();
  }
}

const measured = measure();
// Interrupted: the measurement ends within seconds and drops what it wrote; be sure.
cleanupOnInterrupt(async () => {
  await measured.catch(() => {});
  await drop();
});
finish(await measured);
