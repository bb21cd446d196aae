/**
 * SIGTERM under load on a persistent backend (a SQLite file; Redis too when it answers): 200
 * requests are in flight when the signal arrives (100 creations whose bodies are still arriving,
 * 100 more just sent). Each is answered (201/200) or refused cleanly (connection refused or
 * closed before any byte of an answer), the process exits 0, and after a restart the storage
 * holds exactly the pets acknowledged with 201: none lost, none created without an answer.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RawOutcome } from "../fuzz/raw-http.ts";
import { rawExchange, requestHead } from "../fuzz/raw-http.ts";
import { REDIS_URL, RUN, serviceAvailable } from "../storage/services.ts";
import type { Child } from "../support/server-child.ts";
import { spawnServer, startedUrl } from "../support/server-child.ts";
import type { Pet } from "./support.ts";
import { call, KEY, tempDir } from "./support.ts";

const IN_FLIGHT = 200;

async function cleanRedis(namespace: string) {
  const { createClient } = await import("@keyv/redis");
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: `${namespace}:*`, COUNT: 500 })) {
      const batch = Array.isArray(keys) ? keys : [keys];
      if (batch.length > 0) await client.del(batch);
    }
  } finally {
    await client.close();
  }
}

function pets(text: string): Pet[] {
  return JSON.parse(text) as Pet[];
}

async function walkAll(base: string): Promise<Pet[]> {
  const out: Pet[] = [];
  let next: string | undefined = `${base}/pets?limit=100`;
  for (let i = 0; next !== undefined && i < 1000; i++) {
    const r = await call(next);
    if (r.status !== 200 || !("headers" in r)) throw new Error(`walk: ${r.status}`);
    out.push(...pets(r.body));
    const link = /^<([^>]+)>; rel="next"$/.exec(r.headers.get("link") ?? "")?.[1];
    next = link === undefined ? undefined : new URL(link, base).href;
  }
  return out;
}

/** Runs the scenario against `storage`; returns a description of each rule broken (none: passed). */
async function sigtermUnderLoad(storage: string, children: Child[]) {
  const start = async () => {
    const child = spawnServer({ PORT: "0", PETSTORE_API_KEYS: KEY, PETSTORE_STORAGE: storage, LOG_LEVEL: "warn" });
    children.push(child);
    const url = await startedUrl(child);
    return { child, base: url.href.replace(/\/$/, ""), port: Number(url.port) };
  };
  const { child, base, port } = await start();
  const acked = new Map<number, Pet>();
  for (let i = 0; i < 20; i++) {
    const r = await call(`${base}/pets`, {
      method: "POST",
      body: JSON.stringify({ name: `before ${i}`, categoryId: 1 }),
    });
    assert.is(r.status, 201);
    const pet = JSON.parse((r as { body: string }).body) as Pet;
    acked.set(pet.id, pet);
  }

  const post = (name: string, extra: [string, string][] = []) => {
    const body = JSON.stringify({ name, categoryId: 3, status: "pending" });
    return {
      head: requestHead("POST", "/v1/pets", [
        ["host", "127.0.0.1"],
        ["authorization", `Bearer ${KEY}`],
        ["content-type", "application/json"],
        ["content-length", String(body.length)],
        ...extra,
      ]),
      body,
    };
  };
  // 100 creations in flight: each asks `Expect: 100-continue`, and Node answers `100 Continue` only
  // once it has parsed the request and handed it to the server: then it is in flight for sure.
  // Their bodies are sent after the signal.
  let release: () => void = () => {};
  const afterSignal = new Promise<void>((resolve) => (release = resolve));
  const inFlight: Promise<void>[] = [];
  const slow = Array.from({ length: IN_FLIGHT / 2 }, (_, i) => {
    const { head, body } = post(`slow ${i}`, [["expect", "100-continue"]]);
    let started: () => void = () => {};
    inFlight.push(new Promise<void>((resolve) => (started = resolve)));
    return rawExchange(port, [head, () => afterSignal, body.slice(0, 10), 100, body.slice(10)], {
      timeoutMs: 15_000,
      onInterim: (status) => status === 100 && started(),
    });
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(inFlight),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("the server did not take the 100 requests within 10 s")), 10_000);
    }),
  ]).finally(() => clearTimeout(timer));
  // 100 more, sent just before the signal: half creations, half reads.
  const quick = Array.from({ length: IN_FLIGHT / 2 }, (_, i) => {
    if (i % 2 === 0) {
      const { head, body } = post(`quick ${i}`);
      return rawExchange(port, [head + body], { timeoutMs: 15_000 });
    }
    return rawExchange(
      port,
      [
        requestHead("GET", `/v1/pets?limit=${1 + (i % 50)}`, [
          ["host", "127.0.0.1"],
          ["authorization", `Bearer ${KEY}`],
        ]),
      ],
      { timeoutMs: 15_000 },
    );
  });
  await new Promise((resolve) => setImmediate(resolve));
  child.process.kill("SIGTERM");
  setTimeout(release, 100);
  const outcomes = await Promise.all([...slow, ...quick]);
  const exitCode = await child.exited(20_000);

  const problems: string[] = [];
  const counts: Record<string, number> = {};
  outcomes.forEach((o: RawOutcome, i) => {
    const isSlow = i < slow.length;
    const label =
      o.kind === "answer" ? String(o.answer.status) : o.kind === "closed" && o.partial === "" ? "refused" : o.kind;
    counts[`${isSlow ? "in-flight" : "just sent"} ${label}`] =
      (counts[`${isSlow ? "in-flight" : "just sent"} ${label}`] ?? 0) + 1;
    if (o.kind === "answer") {
      if (o.answer.status === 201) {
        const pet = JSON.parse(o.answer.body.toString()) as Pet;
        acked.set(pet.id, pet);
      } else if (o.answer.status !== 200) problems.push(`request ${i} answered ${o.answer.status}`);
    } else if (isSlow) problems.push(`in-flight creation ${i} was not answered: ${JSON.stringify(o)}`);
    else if (o.kind === "timeout") problems.push(`request ${i} hung`);
    else if (o.partial !== "") problems.push(`request ${i} got half an answer: ${o.partial}`);
  });
  if (exitCode !== 0) problems.push(`exit code ${exitCode}; stderr: ${child.stderr()}`);

  const again = await start();
  const stored = await walkAll(again.base);
  const wanted = [...acked.values()].sort((a, b) => a.id - b.id);
  if (JSON.stringify(stored) !== JSON.stringify(wanted)) {
    const storedIds = new Set(stored.map((p) => p.id));
    const lost = wanted.filter((p) => !storedIds.has(p.id)).map((p) => p.id);
    const extra = stored.filter((p) => !acked.has(p.id)).map((p) => p.id);
    problems.push(
      `after a restart: lost acknowledged pets ${lost.join(",") || "none"}; unacknowledged pets ${extra.join(",") || "none"}`,
    );
  }
  again.child.process.kill("SIGTERM");
  if ((await again.child.exited()) !== 0) problems.push("the restarted server did not exit 0");
  return { problems, counts, acked: acked.size };
}

const children: Child[] = [];
test.after.each(async () => {
  for (const child of children.splice(0)) await child.stop();
});

test(`shutdown: SIGTERM with ${IN_FLIGHT} requests in flight on a SQLite file: all answered or refused cleanly, exit 0, exactly the 201s are there after a restart`, async () => {
  const dir = tempDir("shutdown");
  try {
    const { problems, counts, acked } = await sigtermUnderLoad(`sqlite:${join(dir, "pets.db")}`, children);
    console.log(`  shutdown (sqlite): ${JSON.stringify(counts)}; ${acked} pets acknowledged`);
    assert.equal(problems, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

if (serviceAvailable("redis", "shutdown under load on Redis")) {
  test(`shutdown: SIGTERM with ${IN_FLIGHT} requests in flight on Redis: all answered or refused cleanly, exit 0, exactly the 201s are there after a restart`, async () => {
    const namespace = `shutdown_${RUN}`;
    try {
      const { problems, counts, acked } = await sigtermUnderLoad(`${REDIS_URL}?namespace=${namespace}`, children);
      console.log(`  shutdown (redis): ${JSON.stringify(counts)}; ${acked} pets acknowledged`);
      assert.equal(problems, []);
    } finally {
      await cleanRedis(namespace);
    }
  });
}

test.run();
