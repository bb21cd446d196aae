/**
 * One bad record cannot take the service down: over a real socket, four clients read bad records
 * (each kind a backend can hold) in a loop for a few seconds while a bystander reads a healthy
 * pet. The bystander gets 200 on at least 99% of its requests, the attackers 500 every time, and
 * the breaker (on, as by default) never opens. On every persistent backend.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createNodeHandler } from "../../adapters/node-http.ts";
import { createPetStore } from "../../lib/index.ts";
import type { BreakerObservation } from "../../lib/observe.ts";
import type { Backend } from "../storage/backends.ts";
import { backends, keyvJson } from "../storage/backends.ts";

const KEY = "bad-load-key-0123456789";
const SECONDS = 3;

/** GETs `path` until `until`, counting the statuses. */
async function loop(base: string, paths: string[], until: number): Promise<Map<number | string, number>> {
  const counts = new Map<number | string, number>();
  for (let i = 0; performance.now() < until; i++) {
    let status: number | string;
    try {
      const res = await fetch(`${base}${paths[i % paths.length]}`, {
        headers: { authorization: `Bearer ${KEY}` },
        signal: AbortSignal.timeout(4000),
      });
      await res.arrayBuffer();
      status = res.status;
    } catch (error) {
      status = String(error);
    }
    counts.set(status, (counts.get(status) ?? 0) + 1);
  }
  return counts;
}

const cleanups: (() => Promise<void>)[] = [];
test.after(async () => {
  for (const cleanup of cleanups) await cleanup();
});

for (const backend of backends("bad record load", { memory: false }) as Backend[]) {
  const raw = backend.raw;
  if (raw === undefined) continue;
  test(`${backend.name}: four clients reading bad records for ${SECONDS} s leave a bystander 200 on at least 99% of its reads, and the breaker closed`, async () => {
    const ns = `badl_${randomUUID().replaceAll("-", "").slice(0, 10)}`;
    cleanups.push(() => backend.cleanup([ns]));
    const breaker: BreakerObservation[] = [];
    const store = createPetStore({
      storage: await backend.open(ns),
      auth: [KEY],
      onError: () => {},
      breaker: { onChange: (change) => breaker.push(change) },
    });
    const healthy = await store.createPet({ name: "Healthy", categoryId: 1 });
    const bad: string[] = [];
    for (const value of [
      () => `{"value":not json`,
      (id: number) => keyvJson({ id, name: "", categoryId: 1, status: "sold" }),
      (id: number) => keyvJson({ id, name: "x".repeat(5000), categoryId: 1, status: "sold" }),
      (id: number) => keyvJson({ id: id + 1, name: "Rex", categoryId: 1, status: "sold" }),
    ]) {
      const pet = await store.createPet({ name: "Rex", categoryId: 1 });
      await raw.writeValue(ns, pet.id, value(pet.id));
      bad.push(`/v1/pets/${pet.id}`);
    }
    // A page that holds them is served without them (contract 1.4).
    const page = "/v1/pets?limit=100";
    const server = createServer(createNodeHandler(store));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const until = performance.now() + SECONDS * 1000;
      const [bystander, ...attackers] = await Promise.all([
        loop(base, [`/v1/pets/${healthy.id}`], until),
        ...[0, 1, 2, 3].map(() => loop(base, [...bad, page], until)),
      ]);
      const total = [...(bystander as Map<number | string, number>).values()].reduce((a, b) => a + b, 0);
      const ok = bystander?.get(200) ?? 0;
      const summary = JSON.stringify({ bystander: [...(bystander ?? [])], attackers: attackers.map((a) => [...a]) });
      assert.ok(total > 20, `the bystander made requests: ${summary}`);
      assert.ok(ok >= 0.99 * total, `bystander 200 on ${ok} of ${total}: ${summary}`);
      for (const counts of attackers) assert.equal([...counts.keys()].sort(), [200, 500], summary);
      assert.equal(breaker, [], "the breaker never opened");
      assert.ok(await store.ready(), "ready");
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    }
  });
}

test.run();
