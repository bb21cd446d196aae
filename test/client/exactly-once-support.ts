/**
 * What the end-to-end exactly-once test uses: server processes on one storage, reached by clients
 * through a balancing `fetch` (the client's own option, as a load balancer in front of them would
 * be: each attempt goes to a server alive at that moment), a load of creates and reads made only
 * with `createPetStoreClient`, a tally of every attempt's outcome, and the final checks.
 */

import { createPetStoreClient } from "../../client/index.ts";
import type { Pet } from "../../lib/entries/schemas.ts";
import { KEY, sleep } from "../faults/support.ts";
import type { Child } from "../support/server-child.ts";
import { spawnServer, startedUrl } from "../support/server-child.ts";

/** The servers alive now, by origin ("http://127.0.0.1:PORT"); started ones are stopped by `stopAll()`. */
export class Servers {
  readonly alive: { child: Child; origin: string }[] = [];
  private readonly started: Child[] = [];

  constructor(private readonly storage: string) {}

  async start(): Promise<void> {
    const child = spawnServer({ PORT: "0", PETSTORE_API_KEYS: KEY, PETSTORE_STORAGE: this.storage, LOG_LEVEL: "warn" });
    this.started.push(child);
    this.alive.push({ child, origin: (await startedUrl(child)).origin });
  }

  /**
   * SIGKILLs the first server under load: its requests in flight meet a reset, and for a moment,
   * until the balancer takes it out, new ones meet a refused connection; then another is started.
   */
  async killOne(): Promise<void> {
    const victim = this.alive[0];
    if (victim === undefined) return;
    victim.child.process.kill("SIGKILL");
    await victim.child.exited();
    await sleep(300);
    this.alive.splice(this.alive.indexOf(victim), 1);
    await this.start();
  }

  async stopAll(): Promise<void> {
    for (const child of this.started) await child.stop();
  }
}

/** Every attempt's outcome, for the summary: "POST 201", "GET 503", "POST network failure"… */
export type Tally = Record<string, number>;

/** A fetch for the client that sends each attempt to the next server alive, counting outcomes. */
export function balancingFetch(servers: Servers, tally: Tally) {
  let turn = 0;
  const count = (label: string) => {
    tally[label] = (tally[label] ?? 0) + 1;
  };
  return async (request: Request): Promise<Response> => {
    const server = servers.alive[turn++ % Math.max(1, servers.alive.length)];
    const url = new URL(request.url);
    const body = request.method === "POST" ? await request.text() : undefined;
    try {
      if (server === undefined) throw new TypeError("fetch failed: no server is up");
      const response = await fetch(`${server.origin}${url.pathname}${url.search}`, {
        method: request.method,
        headers: request.headers,
        body,
        signal: request.signal,
      });
      count(`${request.method} ${response.status}`);
      return response;
    } catch (error) {
      count(request.signal.aborted ? `${request.method} time-out` : `${request.method} network failure`);
      throw error;
    }
  };
}

/** The client every load worker uses: retries long enough to outlast each staged outage. */
export function loadClient(servers: Servers, tally: Tally) {
  return createPetStoreClient({
    baseUrl: "http://balancer.test/v1",
    key: KEY,
    fetch: balancingFetch(servers, tally),
    timeoutMs: 3000,
    retry: { attempts: 100, baseDelayMs: 50, maxDelayMs: 1000, totalMs: 60_000 },
  });
}

export interface Ledger {
  /** name → the pet its createPet resolved with. */
  acknowledged: Map<string, Pet>;
  /** Calls that rejected (a create or a read the client gave up on). */
  failures: string[];
}

/**
 * `writers` clients creating pets (a plain `createPet`: the client makes the key) and `readers`
 * reading pages and acknowledged pets, until `stop()`, which lets each finish its call.
 */
export function clientLoad(servers: Servers, tally: Tally, writers = 8, readers = 2) {
  const ledger: Ledger = { acknowledged: new Map(), failures: [] };
  let running = true;
  let n = 0;
  const write = async (w: number) => {
    const client = loadClient(servers, tally);
    while (running) {
      const i = n++;
      const name = `eo ${w}-${i}`;
      const status = (["available", "pending", "sold"] as const)[i % 3];
      try {
        ledger.acknowledged.set(name, await client.createPet({ name, categoryId: 1 + (i % 9), status }));
      } catch (error) {
        ledger.failures.push(`createPet ${name}: ${String(error)}`);
      }
    }
  };
  const read = async (r: number) => {
    const client = loadClient(servers, tally);
    while (running) {
      try {
        const known = [...ledger.acknowledged.values()];
        const pet = known[(r * 7 + known.length) % Math.max(1, known.length)];
        if (pet === undefined || r % 2 === 0) await client.listPets({ limit: 25 });
        else await client.getPet(pet.id);
      } catch (error) {
        ledger.failures.push(`read: ${String(error)}`);
      }
      await sleep(20);
    }
  };
  const done = Promise.all([
    ...Array.from({ length: writers }, (_, w) => write(w)),
    ...Array.from({ length: readers }, (_, r) => read(r)),
  ]);
  return {
    ledger,
    async stop() {
      running = false;
      await done;
    },
  };
}

/**
 * The promise, checked through the client: no call gave up, every acknowledged pet is stored as
 * acknowledged, and every name is stored exactly once. The problems (none when it holds).
 */
export async function exactlyOnceProblems(servers: Servers, ledger: Ledger): Promise<string[]> {
  const problems = [...ledger.failures];
  const stored = new Map<string, Pet[]>();
  for await (const pet of loadClient(servers, {}).pets({ limit: 100 })) {
    stored.set(pet.name, [...(stored.get(pet.name) ?? []), pet]);
  }
  for (const [name, pet] of ledger.acknowledged) {
    const copies = stored.get(name) ?? [];
    if (copies.length !== 1) problems.push(`${name}: stored ${copies.length} times`);
    else if (JSON.stringify(copies[0]) !== JSON.stringify(pet)) {
      problems.push(`${name}: acknowledged ${JSON.stringify(pet)}, stored ${JSON.stringify(copies[0])}`);
    }
  }
  for (const [name, copies] of stored) {
    if (!ledger.acknowledged.has(name) && name.startsWith("eo "))
      problems.push(`${name}: stored but never acknowledged`);
    if (copies.length > 1 && !ledger.acknowledged.has(name)) problems.push(`${name}: stored ${copies.length} times`);
  }
  return problems;
}
