/**
 * The standalone server with 2 workers (node:cluster) on a shared storage passes the conformance
 * cases over the socket, on SQLite, Redis and Postgres: several processes answer as one service.
 * One cluster a backend; before each case the backend's namespace is emptied (ids start again at 1)
 * and the case's pets are seeded through a store of this process on the same namespace.
 */
import http from "node:http";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PetStore } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";
import type { Client } from "../conformance/cases.ts";
import { CASES } from "../conformance/cases.ts";
import { observeResponse } from "../conformance/observe.ts";
import { KEY, sendOverSocket, wireHeaders } from "../conformance/targets.ts";
import { type Child, jsonLines, spawnServer, startedUrl } from "../server-child.ts";
import { type Backend, backends } from "../storage/backends.ts";
import { RUN } from "../storage/services.ts";

function onWorkers(backend: Backend): void {
  const s = suite(`standalone server, 2 workers on ${backend.name}: conformance over the socket`);
  const ns = `${RUN}_wc${backend.name.slice(0, 2)}`;
  let child: Child | undefined;
  let port = 0;
  let store: PetStore | undefined;
  let agent: http.Agent | undefined;

  s.before(async () => {
    // The tables exist before the workers race to create them (each would, once).
    store = createPetStore({ auth: [KEY], storage: await backend.open(ns) });
    child = spawnServer({
      PORT: "0",
      PETSTORE_WORKERS: "2",
      PETSTORE_STORAGE: backend.spec(ns),
      PETSTORE_API_KEYS: KEY,
      LOG_LEVEL: "info",
    });
    port = Number((await startedUrl(child)).port);
    // A connection a request: the primary hands each to the next worker, so both answer cases.
    agent = new http.Agent({ keepAlive: false });
  });

  s.after(async () => {
    agent?.destroy();
    if (child) {
      child.process.kill("SIGTERM");
      await child.exited(30_000).catch(() => undefined);
      await child.stop();
    }
    await store?.close();
    await backend.cleanup([ns]);
  });

  for (const c of CASES) {
    s(c.rule, async () => {
      await backend.raw?.empty(ns);
      let seeded = 0;
      const client: Client = {
        async send(req) {
          const answer = await sendOverSocket(port, agent as http.Agent, req);
          observeResponse(`2 workers on ${backend.name}`, { ...req, headers: wireHeaders(req) }, answer);
          return answer;
        },
        async seed(count, status) {
          for (let i = 0; i < count; i++) {
            seeded++;
            await store?.createPet({ name: `pet-${seeded}`, categoryId: 1, ...(status ? { status } : {}) });
          }
        },
      };
      await c.run(client);
    });
  }
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
