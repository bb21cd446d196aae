/**
 * Idempotent creates: what an Idempotency-Key costs.
 * - `http` (I1, I3): the standalone server on memory storage, loaded by autocannon, each round
 *   all three in turn (A B C, then C A B, B C A, …): POST with a fresh key per request (A), POST
 *   without a key (B), POST replaying one key (C). I1 = A / B (target ≥ 0.85); I3 = C / A, a replay against a create (target ≥ 1: a
 *   replay costs no more than a create).
 * - `storage <backend>` (I2): `createPet` in process, 64 in flight, with a fresh key per call against
 *   without one, alternating rounds, on SQLite, Redis or Postgres (target ≥ 0.70).
 * - `heap` (M2): heap bytes of one key record with a 36-character UUID key in the memory
 *   storage's records (run with --expose-gc; target ≤ 200).
 * Run by bench/run.ts; by hand: `node --expose-gc --import tsx bench/idempotency.ts http [--quick]`.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import autocannon from "autocannon";
import { fingerprintOf } from "../lib/idempotency.ts";
import { createPetStore } from "../lib/index.ts";
import { MemoryKeys } from "../lib/storage/memory/keys.ts";
import { type BackendKind, type BenchStorage, openBench } from "./backends.ts";
import { cleanupOnInterrupt, finish, start, stop, waitFor } from "./child.ts";
import { alternating, concurrent, median, QUICK, skipped, spread } from "./measure.ts";
import { type Row, row } from "./report.ts";

const mode = process.argv[2];
const BODY = JSON.stringify({ name: "Rex", categoryId: 7 });

async function http(): Promise<Row[]> {
  const key = randomBytes(16).toString("hex");
  // As in bench/http.ts: many short rounds, so that the rounds compared are close in time.
  const rounds = QUICK ? 1 : 12;
  const seconds = QUICK ? 1 : 0.75;
  const server: ChildProcess = start("./servers/ours.ts", ["standalone"], { env: { BENCH_KEY: key, BENCH_PETS: "0" } });
  try {
    const { port } = await waitFor(server, "ready", 60_000);
    const replayKey = randomUUID();
    const load = async (variant: "fresh" | "none" | "replay"): Promise<number> => {
      const headers: Record<string, string> = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const result = await autocannon({
        url: `http://127.0.0.1:${port}/v1/pets`,
        method: "POST",
        headers,
        body: BODY,
        connections: 32,
        duration: seconds,
        timeout: 10,
        // Every variant rebuilds each request with one more header of the same length: a fresh key
        // (A), a nonce the server ignores under a name as long as `idempotency-key` (B), the one
        // replayed key (C). The requests are the same size and the client's cost is the same on
        // every side, so the ratios weigh only what the server does with the key.
        requests: [
          {
            setupRequest: (request) => {
              const nonce = randomUUID();
              const extra: Record<string, string> =
                variant === "fresh"
                  ? { "idempotency-key": nonce }
                  : variant === "none"
                    ? { "x-bench-padding": nonce }
                    : { "idempotency-key": replayKey };
              request.headers = { ...request.headers, ...extra };
              return request;
            },
          },
        ],
      });
      if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0 || result.requests.total === 0) {
        throw new Error(
          `I1/I3 ${variant}: ${result.requests.total} requests, ${result.non2xx} non-2xx, ${result.errors} errors`,
        );
      }
      return result.requests.total / result.duration;
    };
    if (!QUICK) {
      await load("fresh");
      await load("none");
    }
    await load("replay"); // the first use of the replayed key: every later one replays
    // Each round loads all three, in an order that turns round by round (A B C, C A B, B C A, …):
    // every ratio compares rounds run back to back, whatever the drift of a shared machine.
    const fresh: number[] = [];
    const none: number[] = [];
    const replay: number[] = [];
    const sides = [
      async () => fresh.push(await load("fresh")),
      async () => none.push(await load("none")),
      async () => replay.push(await load("replay")),
    ];
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < sides.length; k++) await (sides[(k + round) % sides.length] as () => Promise<number>)();
    }
    const i1 = fresh.map((f, i) => f / (none[i] as number));
    const i3 = replay.map((r, i) => r / (fresh[i] as number));
    const note = `${rounds}×${seconds} s per side, 32 connections, standalone server, memory`;
    return [
      row({
        id: "I1",
        scenario: "POST /v1/pets with a fresh Idempotency-Key vs without, memory, over HTTP",
        ours: median(fresh),
        baseline: median(none),
        unit: "req/s",
        ratio: median(i1),
        target: { on: "ratio", op: ">=", value: 0.85 },
        note: `${note}; ratio: median of the round pairs' ${spread(i1)}`,
      }),
      row({
        id: "I3",
        scenario: "POST /v1/pets replaying one Idempotency-Key vs with a fresh key, memory, over HTTP",
        ours: median(replay),
        baseline: median(fresh),
        unit: "req/s",
        ratio: median(i3),
        target: { on: "ratio", op: ">=", value: 1 },
        note: `${note}; ratio ≥ 1: a replay costs no more than a create (${spread(i3)})`,
      }),
    ];
  } finally {
    await stop(server, 10_000);
  }
}

let bench: BenchStorage | undefined;
async function storage(kind: BackendKind): Promise<Row[]> {
  const scenario = `${kind}, createPet with a fresh Idempotency-Key vs without, 64 in flight`;
  const target = { on: "ratio", op: ">=", value: 0.7 } as const;
  try {
    bench = await openBench(kind, "i2");
    const store = createPetStore({ storage: bench.storage, auth: ["bench"], operationTimeoutMs: 30_000 });
    const pet = (i: number) => ({ name: `Pet ${i}`, categoryId: 1 + (i % 50) });
    const keyed = (i: number) => store.createPet(pet(i), { idempotencyKey: randomUUID() });
    const plain = (i: number) => store.createPet(pet(i));
    // Many short rounds, as for the HTTP rows: the rounds compared are close in time, and one
    // disturbed round moves the median less.
    const ms = QUICK ? 400 : 750;
    if (!QUICK) {
      await concurrent(keyed, 64, 500);
      await concurrent(plain, 64, 500);
    }
    const [withKey, without] = await alternating(
      QUICK ? 1 : 8,
      () => concurrent(keyed, 64, ms),
      () => concurrent(plain, 64, ms),
    );
    const ratios = withKey.map((k, i) => k / (without[i] as number));
    return [
      row({
        id: "I2",
        scenario,
        ours: median(withKey),
        baseline: median(without),
        unit: "ops/s",
        ratio: median(ratios),
        target,
        note: `in process, ${withKey.length}×${ms / 1000} s per side; ratio: median of the round pairs' ${spread(ratios)}`,
      }),
    ];
  } catch (error) {
    return skipped(error, [{ id: "I2", scenario, unit: "ops/s", target }]);
  } finally {
    const opened = bench;
    bench = undefined;
    await opened?.drop();
  }
}

function heap(): Row[] {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("bench/idempotency.ts heap needs node --expose-gc");
  const settled = () => {
    for (let i = 0; i < 4; i++) gc();
    const usage = process.memoryUsage();
    return usage.heapUsed + usage.arrayBuffers;
  };
  const records = QUICK ? 50_000 : 500_000;
  const scope = "x".repeat(43); // a token's digest, as HTTP callers have
  const fingerprint = fingerprintOf({ name: "Rex", categoryId: 7, status: "available" });
  const before = settled();
  const keys = new MemoryKeys();
  for (let i = 0; i < records; i++) keys.add(scope, randomUUID(), fingerprint, i + 1, Date.now() + 86_400_000);
  const after = settled();
  if (keys.size !== records) throw new Error(`M2: ${keys.size} records, not ${records}`);
  return [
    row({
      id: "M2",
      scenario: "memory, heap of an idempotency record (36-character UUID key)",
      ours: (after - before) / records,
      baseline: null,
      unit: "bytes/key",
      target: { on: "ours", op: "<=", value: 200 },
      note: `${records.toLocaleString("en-US")} records; heapUsed + arrayBuffers growth, after full GCs`,
    }),
  ];
}

cleanupOnInterrupt(async () => {
  await bench?.drop();
});
if (mode === "http") finish(await http());
else if (mode === "storage") finish(await storage(process.argv[3] as BackendKind));
else if (mode === "heap") finish(heap());
else throw new Error(`bench/idempotency.ts: unknown mode ${JSON.stringify(mode)} (http, storage <backend>, heap)`);
