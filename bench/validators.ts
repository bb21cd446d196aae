/**
 * V1, V2, V3 (issue 59): what validators and compression cost and save on the standalone server,
 * memory storage, 1,000 pets, `GET /v1/pets?limit=100` (a full page of 100 pets).
 * V1: the page revalidated (If-None-Match with its ETag, every answer a 304) against the page
 * itself (every answer a 200 with its body): requests a second, the 304's side as "ours".
 * V2: the page asked with `Accept-Encoding: zstd, br, gzip` (the coding this Node prefers) against
 * the plain page: requests a second. V3: the bytes of that coded body against the plain one's
 * (each coding's in the note). One server, loaded by autocannon from this process over loopback:
 * a warm-up, then rounds A, B, A, B, … as bench/http.ts runs them.
 * Run by bench/run.ts; by hand: `npx tsx bench/validators.ts [--quick]`.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import autocannon from "autocannon";
import { cpuOf, finish, start, stop, waitFor } from "./child.ts";
import { alternating, median, QUICK, spread } from "./measure.ts";
import { row } from "./report.ts";

const PATH = "/v1/pets?limit=100";
const PETS = 1000;
const ROUNDS = QUICK ? 1 : 16;
const ROUND_SECONDS = QUICK ? 1 : 0.75;
const WARM_SECONDS = QUICK ? 0 : 2;
const CONNECTIONS = 32;
const KEY = randomBytes(16).toString("hex");
const BEST = "zstd, br, gzip";

/** One request's status, headers and body as sent (not decoded). */
function ask(port: number, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: number }>((resolve, reject) => {
    const req = http.request(
      { port, host: "127.0.0.1", path: PATH, headers: { authorization: `Bearer ${KEY}`, ...headers } },
      (res) => {
        let bytes = 0;
        res.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

interface Round {
  /** Requests a second. */
  rate: number;
  /** The server's CPU time per request, µs. */
  cpu: number;
}

/** One round of `seconds` with `headers`; throws unless every answer had `status`. */
async function load(
  port: number,
  cpu: () => Promise<number>,
  seconds: number,
  headers: Record<string, string>,
  status: number,
): Promise<Round> {
  const before = await cpu();
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${PATH}`,
    headers: { authorization: `Bearer ${KEY}`, ...headers },
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
  });
  const answered = (result.statusCodeStats as Record<string, { count: number }>)[String(status)]?.count ?? 0;
  if (result.errors > 0 || result.timeouts > 0 || answered !== result.requests.total || answered === 0) {
    throw new Error(
      `validators: ${result.requests.total} requests, ${result.errors} errors, ${result.timeouts} time-outs, ` +
        `statuses ${JSON.stringify(result.statusCodeStats)} (every one should be ${status})`,
    );
  }
  const used = (await cpu()) - before;
  return { rate: result.requests.total / result.duration, cpu: used / result.requests.total };
}

/** Rounds of `a` against `b`, alternated; the median of their rates and of the pairs' ratios. */
async function compare(
  run: (headers: Record<string, string>, status: number, seconds: number) => Promise<Round>,
  a: [Record<string, string>, number],
  b: [Record<string, string>, number],
) {
  if (WARM_SECONDS > 0) {
    await run(...a, WARM_SECONDS);
    await run(...b, WARM_SECONDS);
  }
  const [as, bs] = await alternating(
    ROUNDS,
    () => run(...a, ROUND_SECONDS),
    () => run(...b, ROUND_SECONDS),
  );
  const ratios = as.map((r, i) => r.rate / (bs[i] as Round).rate);
  const cpu = (rounds: Round[]) => median(rounds.map((r) => r.cpu)).toFixed(0);
  return {
    ours: median(as.map((r) => r.rate)),
    baseline: median(bs.map((r) => r.rate)),
    ratio: median(ratios),
    note: `${ROUNDS}×${ROUND_SECONDS} s per side, ${CONNECTIONS} connections; ratio: median of the round pairs' ${spread(ratios)}; server CPU per request ${cpu(as)} µs vs ${cpu(bs)} µs`,
  };
}

async function main() {
  const child = start("./servers/ours.ts", ["standalone"], {
    env: { BENCH_KEY: KEY, BENCH_PETS: String(PETS) },
  });
  try {
    const { port } = await waitFor(child, "ready", 60_000);
    const cpu = () => cpuOf(child);
    const run = (headers: Record<string, string>, status: number, seconds: number) =>
      load(port, cpu, seconds, headers, status);

    const plain = await ask(port, {});
    const etag = plain.headers.etag;
    if (plain.status !== 200 || typeof etag !== "string")
      throw new Error(`validators: the page answered ${plain.status}`);
    const revalidated = await ask(port, { "if-none-match": etag });
    if (revalidated.status !== 304) throw new Error(`validators: If-None-Match answered ${revalidated.status}`);
    const sizes: Record<string, number> = {};
    for (const coding of ["zstd", "br", "gzip"]) {
      const coded = await ask(port, { "accept-encoding": coding });
      if (coded.headers["content-encoding"] === coding) sizes[coding] = coded.bytes;
    }
    const best = await ask(port, { "accept-encoding": BEST });
    const coding = best.headers["content-encoding"];
    if (coding === undefined)
      throw new Error("validators: the server sent the page plain to a client accepting zstd, br and gzip");

    const v1 = await compare(run, [{ "if-none-match": etag }, 304], [{}, 200]);
    const v2 = await compare(run, [{ "accept-encoding": BEST }, 200], [{}, 200]);
    const bytesNote = Object.entries(sizes)
      .map(([name, bytes]) => `${name} ${bytes}`)
      .join(", ");
    return [
      row({
        id: "V1",
        scenario: `${PATH} revalidated (If-None-Match, 304) against the page itself (200, ${plain.bytes} bytes), standalone server, memory, ${PETS.toLocaleString("en-US")} pets`,
        ...v1,
        unit: "req/s",
        target: { on: "ratio", op: ">=", value: 1 },
      }),
      row({
        id: "V2",
        scenario: `${PATH} compressed (Accept-Encoding: ${BEST}: ${coding}) against the plain page, standalone server, memory`,
        ...v2,
        unit: "req/s",
        target: null,
      }),
      row({
        id: "V3",
        scenario: `${PATH}: the ${coding} body against the plain one`,
        ours: best.bytes,
        baseline: plain.bytes,
        unit: "bytes",
        target: { on: "ratio", op: "<=", value: 0.25 },
        note: `each coding's body, bytes: ${bytesNote}; plain ${plain.bytes}`,
      }),
    ];
  } finally {
    await stop(child);
  }
}

finish(await main());
