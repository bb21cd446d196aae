/**
 * The Redis Cluster backend of the storage tests: one cluster per test run (3 primaries, 3
 * replicas, started on first use, ended with the process), a hash-tagged key prefix per namespace
 * as redis/index.ts lays them out, and raw access through a cluster client of its own.
 */
import { redisStorage } from "../../../lib/storage/redis/index.ts";
import { type OwnCluster, startRedisCluster } from "../../support/redis-cluster.ts";
import type { Backend } from "../backends.ts";

type RedisDriver = typeof import("@keyv/redis");

/** Keys of a namespace on a cluster (`{<ns>}:…`, one slot), as redis/index.ts lays them out. */
const nameClusterKeys = (ns: string) => {
  const prefix = `{${ns}}`;
  return { prefix, value: (id: number) => `${prefix}::${id}`, record: `${prefix}:idem:1:s:k` };
};

let sharedCluster: Promise<OwnCluster> | undefined;
let startedCluster: OwnCluster | undefined;

/** The run's one Redis Cluster, started on first use; its processes end with this process. */
export function runCluster(): Promise<OwnCluster> {
  sharedCluster ??= startRedisCluster().then((cluster) => {
    startedCluster = cluster;
    return cluster;
  });
  return sharedCluster;
}

type RedisCluster = ReturnType<RedisDriver["createCluster"]>;

/** A Redis Cluster of this run's own (3 primaries, 3 replicas): a hash-tagged key prefix per namespace. */
export function redisClusterBackend(): Backend {
  let client: RedisCluster | undefined;
  const raw = async () => {
    if (client === undefined) {
      const { createCluster } = await import("@keyv/redis");
      client = createCluster({ rootNodes: (await runCluster()).rootNodes });
      client.on("error", () => {});
      await client.connect();
    }
    return client;
  };
  /** Every key matching `pattern`, from each primary. */
  const scan = async (pattern: string): Promise<string[]> => {
    const c = await raw();
    const found: string[] = [];
    for (const primary of c.masters) {
      for await (const keys of (await c.nodeClient(primary)).scanIterator({ MATCH: pattern, COUNT: 1000 })) {
        found.push(...keys);
      }
    }
    return found;
  };
  return {
    name: "redis-cluster",
    persistent: true,
    open: async (ns, options = {}) =>
      redisStorage({ cluster: { rootNodes: (await runCluster()).rootNodes }, namespace: ns, ...options }),
    spec(ns) {
      if (startedCluster === undefined)
        throw new Error("redis-cluster backend: open a store before asking for its spec");
      return startedCluster.spec(`namespace=${ns}`);
    },
    raw: {
      async writeValue(ns, id, value) {
        await (await raw()).set(nameClusterKeys(ns).value(id), value);
      },
      async addToIndex(ns, id, status) {
        const c = await raw();
        const { prefix } = nameClusterKeys(ns);
        await c.zAdd(`${prefix}:ids`, { score: id, value: String(id) });
        await c.zAdd(`${prefix}:ids:${status}`, { score: id, value: String(id) });
      },
      async setSequence(ns, last) {
        await (await raw()).set(`${nameClusterKeys(ns).prefix}:seq`, String(last));
      },
      keyRecords: async (ns) => (await scan(`${nameClusterKeys(ns).prefix}:idem:*`)).length,
      async keyTtlMs(ns) {
        const [key] = await scan(`${nameClusterKeys(ns).prefix}:idem:*`);
        return key === undefined ? undefined : Number(await (await raw()).pTTL(key));
      },
      async keyv(ns) {
        const { default: KeyvRedis } = await import("@keyv/redis");
        const { default: Keyv } = await import("keyv");
        const { prefix } = nameClusterKeys(ns);
        const store = new KeyvRedis({ rootNodes: (await runCluster()).rootNodes }, { namespace: prefix });
        return new Keyv({ store, namespace: prefix, useKeyPrefix: false });
      },
      async plantRecord(ns) {
        await (await raw()).set(nameClusterKeys(ns).record, "record");
      },
      async countRecords(ns) {
        return (await (await raw()).exists(nameClusterKeys(ns).record)) as number;
      },
    },
    async cleanup(namespaces) {
      if (startedCluster === undefined) return; // never started (or failed to): nothing was written
      for (const ns of namespaces) {
        const keys = await scan(`${nameClusterKeys(ns).prefix}:*`);
        // One namespace's keys share one slot: one UNLINK per batch.
        for (let i = 0; i < keys.length; i += 1000) await (await raw()).unlink(keys.slice(i, i + 1000));
      }
      const c = client;
      client = undefined;
      if (c) c.destroy();
    },
  };
}
