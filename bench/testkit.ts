/**
 * T1: how long `startTestServer()` of `petstore-lib/testing` takes to be ready in process: from
 * the call until it resolves, listening, seeded with 10 pets (each start is then checked with a
 * list over its socket, not timed: a client's own first `fetch` loads undici, which is not the
 * server's cost). The row is the first start of the process (what a test suite's `before` pays:
 * nothing compiled yet); the note gives the median of the starts after it. Target: under 100 ms.
 * Run by bench/run.ts; by hand: `npx tsx bench/testkit.ts [--quick]`.
 */
import { startTestServer } from "../testing/index.ts";
import { finish } from "./child.ts";
import { median, QUICK } from "./measure.ts";
import { row } from "./report.ts";

const WARM_STARTS = QUICK ? 10 : 50;

/** Milliseconds from the call until a server seeded with 10 pets is ready (checked after). */
async function readyMs(): Promise<number> {
  const started = performance.now();
  const server = await startTestServer({ pets: 10 });
  const ms = performance.now() - started;
  const res = await fetch(`${server.url}/pets`, { headers: { authorization: `Bearer ${server.key}` } });
  const pets = (await res.json()) as unknown[];
  await server.close();
  if (res.status !== 200 || pets.length !== 10) throw new Error(`T1: the test server answered ${res.status}`);
  return ms;
}

const first = await readyMs();
const warm: number[] = [];
for (let i = 0; i < WARM_STARTS; i++) warm.push(await readyMs());

finish([
  row({
    id: "T1",
    scenario: "startTestServer() ready, first start",
    ours: first,
    baseline: null,
    unit: "ms",
    target: { on: "ours", op: "<=", value: 100 },
    note: `in process, listening on 127.0.0.1 with 10 seeded pets; the ${WARM_STARTS} starts after it: median ${median(warm).toFixed(1)} ms`,
  }),
]);
