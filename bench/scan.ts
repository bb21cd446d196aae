/**
 * S1: the cost of one page of `listPets` must not depend on the size of the store. For one
 * backend (argv[2]), two stores: 1,000 pets and 1,000,000 pets. Pages start at random places
 * (cursors), measured one call at a time, small store and large store in alternating rounds.
 *   - no filter, limit 100;
 *   - status `sold`, held by 1% of the pets, limit 9: 1% of 1,000 is 10, so the small store fills
 *     a page of 9 and still has a next one.
 * Every query is chosen so that a next page follows, in both stores: both then do the same work
 * (a full page, one pet more read to know it, a cursor for the next) and only the store size
 * differs. (With limit 10 the small store answered last pages, with no cursor to write, and
 * looked cheaper than it is.)
 * Run by bench/run.ts; by hand: `npx tsx bench/scan.ts memory [--quick]`.
 */

import { encodeCursor } from "../lib/cursor.ts";
import { createPetStore, type ListPetsInput, type PetStore } from "../lib/index.ts";
import { type BackendKind, type BenchStorage, openBench } from "./backends.ts";
import { cleanupOnInterrupt, finish } from "./child.ts";
import { abortFill, checkFill, fill, RARE_STATUS } from "./fill.ts";
import { alternating, median, QUICK, sequential, skipped, spread } from "./measure.ts";
import { type Row, row, type Target } from "./report.ts";

const kind = process.argv[2] as BackendKind;
const SMALL = 1000;
const LARGE = QUICK ? 20_000 : Number(process.env.BENCH_S1_PETS ?? 1_000_000);
// Many short rounds, in pairs run back to back (A B, B A, …): on a shared VM the speed drifts
// within seconds, and both rounds of a pair see the same drift.
const ROUNDS = QUICK ? 2 : 12;
const ROUND_MS = QUICK ? 60 : 150;
const TARGET: Target = { on: "ratio", op: "<=", value: 1.5 };

interface Variant {
  label: string;
  limit: number;
  status?: typeof RARE_STATUS;
  /** The highest `after` (a cursor's last id) that still leaves a full page in a store of n pets. */
  lastAfter(n: number): number;
}

const VARIANTS: Variant[] = [
  { label: "no filter, limit 100", limit: 100, lastAfter: (n) => n - 101 },
  // Pet ids that are multiples of 100 are `sold`: 10 of them after `after`, a page of 9 and more.
  { label: `status=${RARE_STATUS} (1%), limit 9`, limit: 9, status: RARE_STATUS, lastAfter: (n) => n - 901 },
];

/**
 * 200 queries starting at random places where a full page follows (a fixed seed: runs compare).
 * Every query carries a cursor, in both stores, so that both do the same work but for the size.
 */
function queries(variant: Variant, n: number): ListPetsInput[] {
  let seed = 12345;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const last = variant.lastAfter(n);
  return Array.from({ length: 200 }, () => {
    const after = 1 + Math.floor(random() * last);
    return { limit: variant.limit, status: variant.status, cursor: encodeCursor(after, variant.status) };
  });
}

/**
 * Runs every query once and checks it answers a full page with a next one: a broken fill must not
 * look fast, and both stores must do the same work.
 */
async function checkQueries(store: PetStore, list: ListPetsInput[], limit: number): Promise<void> {
  for (const query of list) {
    const page = await store.listPets(query);
    if (page.pets.length !== limit || page.nextCursor === undefined) {
      throw new Error(
        `S1 ${kind}: ${JSON.stringify(query)} answered ${page.pets.length} pets ` +
          `(${page.nextCursor === undefined ? "last page" : "more"}), expected ${limit} and more`,
      );
    }
  }
}

const opened: BenchStorage[] = [];
async function dropAll(): Promise<void> {
  for (const b of opened.splice(0)) await b.drop();
}

async function measure(): Promise<Row[]> {
  try {
    const small = await openBench(kind, "s1small");
    opened.push(small);
    const large = await openBench(kind, "s1large");
    opened.push(large);
    const started = Date.now();
    await fill(small, SMALL);
    await fill(large, LARGE);
    const fillSeconds = (Date.now() - started) / 1000;
    const options = { auth: ["bench"], operationTimeoutMs: 30_000 };
    const stores = [small, large].map((b) => createPetStore({ ...options, storage: b.storage }));
    const [smallStore, largeStore] = stores as [PetStore, PetStore];
    await checkFill(smallStore, SMALL);
    await checkFill(largeStore, LARGE);

    const rows: Row[] = [];
    for (const variant of VARIANTS) {
      const smallQueries = queries(variant, SMALL);
      const largeQueries = queries(variant, LARGE);
      await checkQueries(smallStore, smallQueries, variant.limit);
      await checkQueries(largeStore, largeQueries, variant.limit);
      const runSmall = () => sequential((i) => smallStore.listPets(smallQueries[i % smallQueries.length]), ROUND_MS);
      const runLarge = () => sequential((i) => largeStore.listPets(largeQueries[i % largeQueries.length]), ROUND_MS);
      // A round of each, not counted: both code paths are compiled before the clock starts.
      await runSmall();
      await runLarge();
      const [smallUs, largeUs] = await alternating(ROUNDS, runSmall, runLarge);
      // The verdict is on the median of the pairs' ratios: a pair the machine disturbed is one outlier.
      const ratios = largeUs.map((us, i) => us / (smallUs[i] as number));
      rows.push(
        row({
          id: "S1",
          scenario: `${kind}, ${variant.label}`,
          ours: median(largeUs),
          baseline: median(smallUs),
          unit: "µs/page",
          ratio: median(ratios),
          target: TARGET,
          note:
            `${LARGE.toLocaleString("en-US")} vs ${SMALL.toLocaleString("en-US")} pets` +
            (variant === VARIANTS[0] ? ` (filled in ${fillSeconds.toFixed(1)} s)` : "") +
            `; ratio: median of the round pairs' ${spread(ratios)}`,
        }),
      );
    }
    return rows;
  } catch (error) {
    return skipped(
      error,
      VARIANTS.map((v) => ({ id: "S1", scenario: `${kind}, ${v.label}`, unit: "µs/page", target: TARGET })),
    );
  } finally {
    await dropAll();
  }
}

const measured = measure();
// Interrupted: stop filling, let measure() end (it drops what it wrote), and be sure.
cleanupOnInterrupt(async () => {
  abortFill();
  await measured.catch(() => {});
  await dropAll();
});
finish(await measured);
