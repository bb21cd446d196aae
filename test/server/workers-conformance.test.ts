/**
 * The standalone server with 2 workers (node:cluster) on a shared storage passes the published
 * conformance cases (`petstore-lib/conformance`) over the socket, on SQLite, Redis and Postgres:
 * several processes answer as one service. One cluster a backend; the target's `reset()` clears the
 * namespace through a storage of this process (`storage.clear()`: no pets, ids start again at 1).
 * Each case opens its own connection, which the primary hands to the next worker: both serve.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { SocketTarget } from "../../conformance/index.ts";
import { conformanceCases } from "../../conformance/index.ts";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { type Backend, backends } from "../storage/backends.ts";
import { RUN } from "../storage/services.ts";
import { type Child, jsonLines, spawnServer, startedUrl } from "../support/server-child.ts";

const KEY = "workers-conformance-key";

function onWorkers(backend: Backend): void {
  const s = suite(`standalone server, 2 workers on ${backend.name}: the published conformance cases over the socket`);
  const ns = `${RUN}_wc${backend.name.slice(0, 2)}`;
  let child: Child | undefined;
  let storage: PetStorage | undefined;
  let origin = "";
  const target: SocketTarget = {
    basePath: "/v1",
    key: KEY,
    reset: async () => storage?.clear?.(),
    get url() {
      return origin;
    },
  };

  s.before(async () => {
    // The tables exist before the workers start (each would create them, once).
    storage = await backend.open(ns);
    child = spawnServer({
      PORT: "0",
      PETSTORE_WORKERS: "2",
      PETSTORE_STORAGE: backend.spec(ns),
      PETSTORE_API_KEYS: KEY,
    });
    origin = (await startedUrl(child)).origin;
  });

  s.after(async () => {
    if (child) {
      child.process.kill("SIGTERM");
      await child.exited(30_000).catch(() => undefined);
      await child.stop();
    }
    await storage?.close();
    await backend.cleanup([ns]);
  });

  for (const c of conformanceCases()) s(c.name, () => c.run(target));

  s("both workers answered (the request log lines carry two pids)", async () => {
    const log = child as Child;
    const pids = () =>
      new Set(
        jsonLines(log.stdout())
          .filter((l) => l.msg === "request")
          .map((l) => l.pid),
      );
    // Log lines are written in batches (every 200 ms at most): wait for them, boundedly.
    for (let i = 0; i < 50 && pids().size < 2; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.is(pids().size, 2, [...pids()].join(", "));
  });
  s.run();
}

for (const backend of backends("workers conformance", { memory: false })) onWorkers(backend);
