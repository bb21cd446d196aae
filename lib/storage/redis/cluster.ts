/**
 * A Redis Cluster as the store's connection: node-redis's cluster client, connected only to the
 * primary that owns the store's slot (every key of a store shares one hash tag). While a node
 * fails, the client is asked for the cluster's map again, as node-redis does so by itself only on a
 * MOVED reply, which a killed primary never sends: a promoted replica is then found without a restart.
 */
import { redactUrl, unreachable } from "../config-error.ts";
import { loadDriver } from "../driver.ts";
import {
  type Closable,
  closeClient,
  delayReconnect,
  failAfter,
  makeClientOptions,
  RESP_INTEGER,
  type RedisCommands,
  type RedisConnection,
  type RedisDriver,
} from "./connection.ts";
import type { WriteClient } from "./durability.ts";

/** The map is asked for at most this often while nodes fail. */
const REDISCOVER_MS = 200;

/** The part of node-redis's cluster internals that looks for the map again (see `rediscover`). */
interface ClusterSlots {
  rediscover?(startWith: { options: object }): Promise<void>;
}

/**
 * Opens a cluster client from its root nodes and finds the primary of `slotKey`'s slot; rejects
 * with StorageConfigError when no root node answers or that primary does not.
 */
export async function connectCluster(urls: string[], slotKey: string, timeoutMs: number): Promise<RedisConnection> {
  const { createClient, createCluster } = await loadDriver<RedisDriver>("@keyv/redis", "redis");
  const first = new URL(urls[0] as string);
  const options = makeClientOptions(timeoutMs);
  // What every node gets: the first root URL's user, password and TLS, the time-outs, and
  // reconnection for ever (a node that leaves the map is dropped by the client).
  const defaults = {
    ...options,
    ...(first.username === "" ? {} : { username: decodeURIComponent(first.username) }),
    ...(first.password === "" ? {} : { password: decodeURIComponent(first.password) }),
    socket: {
      ...options.socket,
      ...(first.protocol === "rediss:" ? { tls: true as const } : {}),
      reconnectStrategy: delayReconnect,
    },
  };
  const cluster = createCluster({
    rootNodes: urls.map((url) => ({ url })),
    defaults,
    // Only the nodes in use (the store's primary) get a connection, when first used.
    minimizeConnections: true,
    useReplicas: false,
  });
  let slot = -1;
  let opened = false;
  let askedAt = Number.NEGATIVE_INFINITY;
  const failures: unknown[] = [];

  /** Asks for the map again (from another primary, else the root nodes), at most every 200 ms. */
  function rediscover(): void {
    const slots = (cluster as unknown as { _slots?: ClusterSlots })._slots;
    if (!opened || typeof slots?.rediscover !== "function" || performance.now() - askedAt < REDISCOVER_MS) return;
    askedAt = performance.now();
    const primary = cluster.slots[slot]?.master;
    const other = cluster.masters.find((node) => node.address !== primary?.address) ?? primary;
    if (other === undefined) return;
    slots.rediscover({ options: { socket: { host: other.host, port: other.port } } }).catch(() => {});
  }
  // Failures reach callers as rejections; an unheard "error" event would crash the process.
  cluster.on("error", (error: unknown) => {
    if (!opened) failures.push(error);
  });
  cluster.on("node-error", rediscover);

  const started = performance.now();
  try {
    await cluster.connect();
    const reply = cluster.sendCommand(slotKey, true, ["CLUSTER", "KEYSLOT", slotKey]);
    slot = Number(await failAfter(reply, timeoutMs, "the primary of the store's slot"));
    opened = true;
  } catch (error) {
    cluster.destroy();
    const all = new AggregateError([error, ...failures], (error as Error)?.message);
    throw unreachable("redis cluster", urls.map(redactUrl).join(","), 6379, all, performance.now() - started);
  }

  let writer: { address: string; client: { isOpen: boolean; connect(): Promise<unknown> } & Closable } | undefined;
  return {
    driverClient: cluster,
    commands: cluster as unknown as RedisCommands,
    exact: cluster.withTypeMapping({ [RESP_INTEGER]: String }) as unknown as RedisCommands,
    async writer() {
      const primary = cluster.slots[slot]?.master;
      if (primary === undefined) throw new Error("redis cluster: no primary is known for the store's slot");
      if (writer?.address !== primary.address) {
        if (writer?.client.isOpen) writer.client.destroy();
        const client = createClient({
          ...defaults,
          socket: { ...defaults.socket, host: primary.host, port: primary.port },
        });
        client.on("error", rediscover);
        writer = { address: primary.address, client };
      }
      const { client } = writer;
      // Once open it reconnects by itself; meanwhile its commands fail at once (no offline queue).
      if (!client.isOpen) await failAfter(client.connect(), timeoutMs, "redis write connection");
      return client as unknown as WriteClient;
    },
    failed: rediscover,
    async *scan(pattern) {
      const primary = cluster.slots[slot]?.master;
      if (primary === undefined) throw new Error("redis cluster: no primary is known for the store's slot");
      yield* (await cluster.nodeClient(primary)).scanIterator({ MATCH: pattern, COUNT: 1000 });
    },
    async ping() {
      // A keyed command: it reaches the slot's primary, and fails while the cluster is down.
      await cluster.sendCommand(slotKey, true, ["EXISTS", slotKey]);
    },
    async close() {
      opened = false;
      await Promise.all([closeClient(cluster, timeoutMs), closeClient(writer?.client, timeoutMs)]);
    },
  };
}
