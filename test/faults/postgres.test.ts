/**
 * Postgres connections cut under load. The standalone server (a child process) uses a database
 * created for this run, so that we can cut it off without touching anyone else's:
 * 1. an outage: the database stops accepting connections and every backend of it is terminated
 *    (pg_terminate_backend): requests get 503 storage_unavailable, none hangs; when it accepts
 *    connections again the same server process recovers by itself;
 * 2. repeated connection cuts with no outage: every request is answered 2xx or 503, never 500.
 * Every pet acknowledged with 201 stays readable.
 */
import { createRequire } from "node:module";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { POSTGRES_URL, RUN, serviceAvailable } from "../storage/services.ts";
import type { Child } from "../support/server-child.ts";
import { spawnServer, startedUrl } from "../support/server-child.ts";
import type { Pet } from "./support.ts";
import { createsAgain, KEY, mixedLoad, sleep, tally, unreadable } from "./support.ts";

interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}
const require = createRequire(import.meta.url);
const pg = createRequire(require.resolve("@keyv/postgres"))("pg") as { Client: new (url: string) => PgClient };

const HANG_MS = 4000;
const DATABASE = `petfault_${RUN}`;

if (serviceAvailable("postgres", "Postgres fault tests")) {
  const admin = new pg.Client(POSTGRES_URL);
  let child: Child | undefined;
  let created = false;
  const terminate = async () =>
    (
      await admin.query(
        "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        [DATABASE],
      )
    ).rows[0]?.n as number;

  test.before(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${DATABASE}`);
    created = true;
  });
  test.after(async () => {
    await child?.stop();
    if (created) {
      await admin.query(`ALTER DATABASE ${DATABASE} ALLOW_CONNECTIONS true`).catch(() => {});
      await terminate().catch(() => {});
      await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`).catch(() => {});
    }
    await admin.end();
  });

  test("faults: Postgres cut off under load (no connections allowed, backends terminated) gives 503 storage_unavailable, no hang; recovers by itself; every 201 still readable", async () => {
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${DATABASE}`;
    child = spawnServer({
      PORT: "0",
      PETSTORE_API_KEYS: KEY,
      PETSTORE_STORAGE: `${url.href}${url.search ? "&" : "?"}namespace=fault`,
      LOG_LEVEL: "warn",
    });
    const base = (await startedUrl(child)).href.replace(/\/$/, "");
    const pid = child.process.pid;
    const acked = new Map<number, Pet>();

    const before = mixedLoad(base, acked);
    await sleep(1000);
    await before.stop();
    assert.ok(acked.size > 20, `pets were created: ${JSON.stringify(tally(before.results))}`);

    // 1. The outage.
    const during = mixedLoad(base, acked);
    await sleep(300);
    await admin.query(`ALTER DATABASE ${DATABASE} ALLOW_CONNECTIONS false`);
    const cut = await terminate();
    const cutAt = performance.now();
    assert.ok(cut > 0, "the server's connections were terminated");
    await sleep(2500);
    await during.stop();
    const summary = JSON.stringify(tally(during.results));
    const after = during.results.filter((r) => r.startedAt > cutAt + 200);
    assert.ok(after.length > 20, `requests ran during the outage: ${summary}`);
    for (const r of during.results) {
      assert.ok(r.outcome.status !== "no answer", `a request hung (no answer in ${HANG_MS} ms): ${summary}`);
      assert.ok([200, 201, 503].includes(r.outcome.status as number), `only 2xx or 503: ${summary}`);
    }
    for (const r of after) {
      assert.is(r.outcome.status, 503, `every request during the outage is 503: ${summary}`);
      assert.is((r.outcome as { code?: string }).code, "storage_unavailable");
    }
    console.log(
      `  postgres outage: ${cut} connections cut, ${after.length} requests during it, all 503; slowest ${Math.round(Math.max(...after.map((r) => r.outcome.ms)))} ms`,
    );

    await admin.query(`ALTER DATABASE ${DATABASE} ALLOW_CONNECTIONS true`);
    await createsAgain(base, 20_000, "the server creates pets again once Postgres accepts connections");
    assert.is(child.process.pid, pid);
    assert.is(child.process.exitCode, null, "our server process never stopped");

    // 2. Connections cut again and again, with no outage.
    const cuts = mixedLoad(base, acked);
    let terminated = 0;
    for (let i = 0; i < 10; i++) {
      await sleep(100);
      terminated += await terminate();
    }
    await sleep(500);
    await cuts.stop();
    const cutSummary = JSON.stringify(tally(cuts.results));
    assert.ok(terminated > 0, "connections were cut");
    for (const r of cuts.results) {
      assert.ok(
        [200, 201, 503].includes(r.outcome.status as number),
        `only 2xx or 503 while connections are cut: ${cutSummary}`,
      );
    }
    console.log(`  postgres cuts: ${terminated} connections terminated under load: ${cutSummary}`);

    const settled = mixedLoad(base, acked);
    await sleep(500);
    await settled.stop();
    assert.ok(
      settled.results.every((r) => r.outcome.status === 200 || r.outcome.status === 201),
      `after the cuts: ${JSON.stringify(tally(settled.results))}`,
    );
    assert.equal(await unreadable(base, acked), [], "every acknowledged pet is readable, in the walk too");

    child.process.kill("SIGTERM");
    assert.is(await child.exited(), 0);
  });

  test.run();
}
