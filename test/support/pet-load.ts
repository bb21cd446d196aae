/**
 * A bounded load of creates over HTTP, for the server life tests: `clients` loops each POST pets
 * one after another until `stop()` or `perClient` attempts. Every pet acknowledged with `201` is
 * kept, to check later that none was lost.
 */
import type { Pet } from "../../lib/entries/schemas.ts";

export interface PetLoad {
  /** The pets answered 201 so far. */
  acked: Pet[];
  /** Attempts that got no 201 (refused connections, resets, other statuses). */
  failures(): number;
  /** Resolves once `n` pets were acknowledged (rejects after `ms`). */
  reached(n: number, ms?: number): Promise<void>;
  /** Stops every loop after its current request; resolves when they all ended. */
  stop(): Promise<void>;
}

export function startPetLoad(url: string, key: string, clients = 8, perClient = 3000): PetLoad {
  const acked: Pet[] = [];
  let failures = 0;
  let stopped = false;
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const loops = Array.from({ length: clients }, async (_, c) => {
    for (let i = 0; i < perClient && !stopped; i++) {
      try {
        const res = await fetch(`${url}/pets`, {
          method: "POST",
          headers,
          body: JSON.stringify({ name: `load-${c}-${i}`, categoryId: 1 + c }),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        if (res.status === 201) acked.push(JSON.parse(text) as Pet);
        else failures++;
      } catch {
        failures++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  });
  const all = Promise.all(loops);
  return {
    acked,
    failures: () => failures,
    async reached(n, ms = 30_000) {
      const until = Date.now() + ms;
      while (acked.length < n) {
        if (Date.now() > until) throw new Error(`only ${acked.length} of ${n} pets acknowledged within ${ms} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop() {
      stopped = true;
      await all;
    },
  };
}
