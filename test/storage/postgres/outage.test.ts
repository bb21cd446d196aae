/**
 * Postgres going away during a run, simulated with a TCP proxy of our own in front of the real
 * server (the shared server itself is never stopped): cut, then frozen. Every operation answers
 * 503 storage_unavailable within the operation time-out, readiness says so, and the service
 * recovers by itself when the path is back.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PetStore } from "../../../lib/index.ts";
import type { PetStorage } from "../../../lib/storage/port.ts";
import { postgresStorage } from "../../../lib/storage/postgres/index.ts";
import { call, json, makeStore } from "../../support/helpers.ts";
import { postgresBackend } from "../backends.ts";
import { answers503, eventually, freePort, storageRejectsEverything } from "../outage.ts";
import { POSTGRES_URL, RUN, serviceAvailable } from "../services.ts";

const TIMEOUT_MS = 2000;
const HANG_MS = 2 * TIMEOUT_MS + 1000;

/** A TCP proxy to the real Postgres that can be cut (connections dropped, port closed) or frozen (bytes held). */
function proxy(port: number) {
  const target = new URL(POSTGRES_URL);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let frozen = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  return {
    async start() {
      server = createServer((client) => {
        const upstream = tcpConnect(Number(target.port) || 5432, target.hostname);
        track(client);
        track(upstream);
        client.on("close", () => upstream.destroy());
        upstream.on("close", () => client.destroy());
        client.on("data", (chunk) => {
          if (!frozen) upstream.write(chunk);
        });
        upstream.on("data", (chunk) => {
          if (!frozen) client.write(chunk);
        });
      });
      await new Promise<void>((resolve) => server?.listen(port, "127.0.0.1", resolve));
    },
    async cut() {
      const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
      server = undefined;
    },
    freeze(on: boolean) {
      frozen = on;
    },
  };
}

if (serviceAvailable("postgres", "outage")) {
  const s = suite("storage outage: postgres");
  const table = `${RUN}_out`;
  let path: ReturnType<typeof proxy>;
  let storage: PetStorage | undefined;
  let store: PetStore;
  let proxied: string;

  s.before(async () => {
    const port = await freePort();
    path = proxy(port);
    await path.start();
    const url = new URL(POSTGRES_URL);
    url.hostname = "127.0.0.1";
    url.port = String(port);
    proxied = url.href;
    storage = await postgresStorage({ url: proxied, table, operationTimeoutMs: TIMEOUT_MS });
    store = makeStore({ storage, operationTimeoutMs: TIMEOUT_MS });
  });

  s.after(async () => {
    await store?.close();
    await path?.cut();
    await postgresBackend().cleanup([table]);
  });

  s("postgres up: pets are created and ready() is true", async () => {
    for (const name of ["Rex", "Mia"]) {
      const response = await call(store, "POST", "/v1/pets", {
        body: JSON.stringify({ name, categoryId: 1, status: "sold" }),
      });
      assert.is(response.status, 201);
    }
    assert.is(await store.ready(), true);
  });

  s(
    "postgres cut off: every operation answers 503 storage_unavailable (never 404 or []), ready() is false, calls reject",
    async () => {
      await path.cut();
      await answers503(store);
      assert.is(await store.ready(), false);
      assert.ok(storage);
      await storageRejectsEverything(storage, HANG_MS);
    },
  );

  s("postgres back: the service recovers by itself, with its pets and its id sequence", async () => {
    await path.start();
    assert.ok(await eventually(() => store.ready(), 10_000), "ready() turns true again");
    const list = await call(store, "GET", "/v1/pets");
    assert.is(list.status, 200);
    assert.equal(
      (json(list) as { name: string }[]).map((p) => p.name),
      ["Rex", "Mia"],
    );
    const created = await call(store, "POST", "/v1/pets", { body: JSON.stringify({ name: "After", categoryId: 1 }) });
    assert.is(created.status, 201);
    assert.ok((json(created) as { id: number }).id > 2);
  });

  s(
    "postgres frozen (no bytes through): calls answer 503 within the time-out instead of hanging; then all works again",
    async () => {
      path.freeze(true);
      try {
        assert.ok(storage);
        await storageRejectsEverything(storage, HANG_MS);
        await answers503(store);
        assert.is(await store.ready(), false);
      } finally {
        path.freeze(false);
      }
      assert.ok(await eventually(() => store.ready(), 10_000), "ready() turns true again");
      const list = await call(store, "GET", "/v1/pets", { query: "status=sold" });
      assert.is(list.status, 200);
      assert.is((json(list) as unknown[]).length, 2);
    },
  );

  s(
    "postgres frozen with every connection busy: the connections whose queries got no answer are let go, so calls work again once the path is back",
    async () => {
      const small = await postgresStorage({ url: proxied, table, operationTimeoutMs: TIMEOUT_MS, maxConnections: 2 });
      try {
        assert.ok(await small.get(1), "pet 1 is read through the proxy");
        path.freeze(true);
        let outcomes: PromiseSettledResult<unknown>[];
        try {
          // Both connections send a query whose bytes the frozen path drops: no answer will ever come.
          outcomes = await Promise.allSettled([small.get(1), small.get(2)]);
          // The storage's own time-out answered the callers; the connections' read time-out ends just after.
          await new Promise((resolve) => setTimeout(resolve, 500));
        } finally {
          path.freeze(false);
        }
        assert.equal(
          outcomes.map((outcome) => outcome.status),
          ["rejected", "rejected"],
        );
        // Kept out of the pool, the two connections would leave every later call waiting for one.
        const read = async () =>
          (await Promise.resolve()
            .then(() => small.get(1))
            .catch(() => undefined)) !== undefined;
        assert.ok(await eventually(read, 3 * TIMEOUT_MS), "pet 1 is read again on new connections");
      } finally {
        // A connection never let go would hold close() too: the failure above is reported all the same.
        await Promise.race([small.close(), new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS).unref())]);
      }
    },
  );

  s.run();
}
