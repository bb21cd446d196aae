/**
 * Storage on the other runtimes: the conformance cases run against the fetch handler served by
 * Bun.serve and Deno.serve on SQLite (@keyv/sqlite and its native sqlite3 addon), Redis and
 * Postgres (memory: the conformance suite). Each case gets a fresh namespace. On workerd, what
 * opening each storage does. The README's storage × runtime table says what this proves.
 */
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { SocketTarget } from "../../conformance/index.ts";
import { conformanceCases } from "../../conformance/index.ts";
import { CORS_ORIGIN } from "../support/conformance-origin.ts";
import { runEachCase } from "../support/run-cases.ts";
import type { Runtime } from "../support/runtimes.ts";
import { runtimeAvailable, startChild } from "../support/runtimes.ts";
import { bundleWorker, COMPATIBILITY } from "../support/worker.ts";
import { backends } from "./backends.ts";
import { RUN } from "./services.ts";

const CHILD = fileURLToPath(new URL("../support/fetch-child.ts", import.meta.url));
const STORAGE_WORKER = fileURLToPath(new URL("../support/storage-worker.ts", import.meta.url));

for (const runtime of ["bun", "deno"] as Runtime[]) {
  if (!runtimeAvailable(runtime, "storage on other runtimes")) continue;
  for (const backend of backends(`storage on ${runtime}`, { memory: false, cluster: false })) {
    const cases = conformanceCases();
    test(`${backend.name} storage on ${runtime}: the fetch handler passes every published conformance case (${cases.length})`, async () => {
      const namespace = `${RUN}_${runtime}`;
      const child = await startChild(runtime, CHILD, {
        PETSTORE_STORAGE: backend.spec("{ns}"),
        CHILD_NAMESPACE: namespace,
      });
      let resets = 1; // the child opened namespace _1 at start
      const target: SocketTarget = {
        basePath: "/v1",
        key: "conformance-key",
        cors: { origin: CORS_ORIGIN }, // the child's store allows it
        url: `http://127.0.0.1:${child.port}`,
        async reset() {
          await child.command("reset"); // a fresh namespace: an empty store
          resets++;
        },
      };
      try {
        await runEachCase(cases, target);
        assert.is(child.stderr(), "", "nothing on stderr");
      } finally {
        await child.stop();
        await backend.cleanup(Array.from({ length: resets }, (_, i) => `${namespace}_${i + 1}`));
      }
    });
  }
}

test("on Cloudflare Workers (workerd), memory storage opens; SQLite, Redis and Postgres cannot: their drivers are loaded by a dynamic import(), which a Worker bundle cannot resolve", async () => {
  const script = await bundleWorker(STORAGE_WORKER);
  // Given as an explicit module: Miniflare refuses to even load a script with a dynamic import() it
  // cannot resolve, where wrangler would deploy it and fail the same way at the import.
  const mf = new Miniflare({ modules: [{ type: "ESModule", path: "worker.mjs", contents: script }], ...COMPATIBILITY });
  try {
    const open = async (spec: string) =>
      (await mf.dispatchFetch(`http://worker/?spec=${encodeURIComponent(spec)}`)).json() as Promise<unknown>;
    assert.equal(await open("memory"), { ok: true });
    for (const [spec, pkg] of [
      ["sqlite:/tmp/petstore-worker.db", "@keyv/sqlite"],
      ["redis://127.0.0.1:6379", "@keyv/redis"],
      ["postgres://postgres@127.0.0.1:5432/test", "@keyv/postgres"],
    ] as const) {
      assert.equal(await open(spec), { name: "Error", message: `No such module "${pkg}".` }, spec);
    }
  } finally {
    await mf.dispose();
  }
});

test.run();
