/**
 * Redis storage: pet values in Keyv (@keyv/redis), and on the same connection what Keyv cannot
 * do: the id sequence (`INCR`) and one sorted set of ids for all pets plus one per status, so a
 * page is one `ZRANGEBYSCORE … LIMIT` (O(log n + limit)) whatever the filter.
 *
 * Every key starts with `<namespace>:` (values are `<namespace>::<id>`, as @keyv/redis writes
 * them), so several stores and the host's own data share one server; only `clear()` (for tests)
 * deletes, and only under its own namespace.
 * The client fails fast: no offline queue (a call while disconnected rejects at once), a
 * connect and command time-out, and a reconnect strategy that retries forever at most every
 * 500 ms, so the service recovers by itself when Redis returns.
 */
import type { Pet, PetStatus } from "../schemas.ts";
import { redactUrl, StorageConfigError, unreachable } from "./config-error.ts";
import { loadDriver } from "./driver.ts";
import type { ListPage, PetData, PetStorage } from "./port.ts";
import { checkNewId, indexedId, petValues, readPet, readPets, storageClosed, writePet } from "./values.ts";

type RedisDriver = typeof import("@keyv/redis");

export interface RedisStorageOptions {
  /** `redis://[user:password@]host[:port][/db]`, or `rediss://…` for TLS. */
  url: string;
  /** Prefix of every key this store writes (default "petstore"): letters, digits, `_`, `.`, `-`. */
  namespace?: string;
  /** Connect and command time-out in ms (default 2000). */
  operationTimeoutMs?: number;
}

const NAMESPACE = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_RECONNECT_DELAY_MS = 500;
/** RESP_TYPES.NUMBER of @redis/client: the integer reply type, ":". */
const RESP_INTEGER = 58;

function checkOptions(options: RedisStorageOptions): { url: string; namespace: string; timeoutMs: number } {
  const url = options?.url;
  if (typeof url !== "string" || !/^rediss?:\/\//i.test(url) || !URL.canParse(url)) {
    throw new StorageConfigError(
      `redis storage: url must look like redis://host:6379 or rediss://host:6380 (got ${JSON.stringify(redactUrl(String(url)))})`,
    );
  }
  const namespace = options.namespace ?? "petstore";
  if (!NAMESPACE.test(namespace)) {
    throw new StorageConfigError(
      `redis storage: namespace must be 1 to 64 letters, digits, "_", "." or "-" (got ${JSON.stringify(namespace)})`,
    );
  }
  const timeoutMs = options.operationTimeoutMs ?? 2000;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) {
    throw new StorageConfigError(`redis storage: operationTimeoutMs must be a positive integer (got ${timeoutMs})`);
  }
  return { url, namespace, timeoutMs };
}

/**
 * Opens a Redis storage; rejects with StorageConfigError when the driver is missing or Redis does
 * not answer. @example createPetStore({ storage: await redisStorage({ url: "redis://127.0.0.1:6379", namespace: "shop" }), auth })
 */
export async function redisStorage(options: RedisStorageOptions): Promise<PetStorage> {
  const { url, namespace, timeoutMs } = checkOptions(options);
  const { default: KeyvRedis, createClient } = await loadDriver<RedisDriver>("@keyv/redis", "redis");

  let connectedOnce = false;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    // A command is timed out only while it waits to be written; one that Redis never answers
    // (frozen server, lost network) is ended by the socket time-out instead, which drops the
    // connection, rejects what waits on it, and reconnects. The pings keep a quiet but healthy
    // connection from looking idle.
    commandOptions: { timeout: timeoutMs },
    // A reply missing for 2/3 of the time-out (at most 1/3 after the last ping) ends the
    // connection, so a call rejects within the time-out.
    pingInterval: Math.max(50, Math.floor(timeoutMs / 3)),
    socket: {
      connectTimeout: timeoutMs,
      socketTimeout: Math.max(100, Math.ceil((timeoutMs * 2) / 3)),
      // Before the first connection, give up at once so that a wrong URL fails at open; after
      // it, retry forever with a short, bounded delay.
      reconnectStrategy: (retries: number, cause: Error) =>
        connectedOnce ? Math.min(50 * 2 ** retries, MAX_RECONNECT_DELAY_MS) : cause,
    },
  });
  // Failures reach callers as rejections; an unheard "error" event would crash the process.
  client.on("error", () => {});
  client.on("ready", () => {
    connectedOnce = true;
  });
  try {
    await client.connect();
  } catch (error) {
    if (client.isOpen) client.destroy();
    throw unreachable("redis", url, 6379, error);
  }

  const store = new KeyvRedis(client as unknown as ConstructorParameters<typeof KeyvRedis>[0], {
    namespace,
    throwOnErrors: true,
    throwOnConnectError: true,
  });
  const values = petValues(store, { namespace, keyPrefix: false });
  // The client decodes integer replies imprecisely near 2^53 (9007199254740991 comes back as
  // …992); the sequence is read as the exact decimal string instead.
  const exact = client.withTypeMapping({ [RESP_INTEGER]: String });
  const sequenceKey = `${namespace}:seq`;
  const indexKey = (status?: PetStatus) => (status === undefined ? `${namespace}:ids` : `${namespace}:ids:${status}`);
  let closing: Promise<void> | undefined;
  // A closed store refuses calls before they reach the driver (@keyv/redis would even reconnect).
  const ensureOpen = () => {
    if (closing !== undefined) throw storageClosed("redis");
  };

  return {
    kind: "redis",
    async create(data: PetData): Promise<Pet> {
      ensureOpen();
      const id = checkNewId(Number(await exact.incr(sequenceKey)), "redis");
      const pet: Pet = { id, name: data.name, categoryId: data.categoryId, status: data.status };
      return writePet(values, pet, () =>
        client
          .multi()
          .zAdd(indexKey(), { score: id, value: String(id) })
          .zAdd(indexKey(pet.status), { score: id, value: String(id) })
          .exec(),
      );
    },
    async get(id: number): Promise<Pet | undefined> {
      ensureOpen();
      return readPet(
        id,
        "redis",
        async () => (await client.zScore(indexKey(), String(id))) !== null,
        () => values.get(String(id)),
      );
    },
    async list({ status, after, limit }: ListPage): Promise<Pet[]> {
      ensureOpen();
      const members = await client.zRangeByScore(indexKey(status), `(${after}`, "+inf", {
        LIMIT: { offset: 0, count: limit },
      });
      return readPets(
        values,
        members.map((m) => indexedId(String(m), "redis")),
        "redis",
      );
    },
    async ping() {
      ensureOpen();
      await client.ping();
    },
    close() {
      closing ??= closeClient(client, timeoutMs);
      return closing;
    },
    /**
     * Deletes every key under `<namespace>:` (values, sequence, indexes and any other record of
     * this store), found with SCAN, never KEYS or FLUSHDB: other namespaces are untouched.
     */
    async clear() {
      ensureOpen();
      for await (const keys of client.scanIterator({ MATCH: `${namespace}:*`, COUNT: 1000 })) {
        if (keys.length > 0) await client.unlink(keys);
      }
    },
  };
}

/** Closes gracefully (pending replies arrive), or drops the connection when Redis does not answer. */
async function closeClient(client: { isOpen: boolean; close(): Promise<unknown>; destroy(): void }, timeoutMs: number) {
  if (!client.isOpen) return;
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([client.close().catch(() => {}), gaveUp]);
  clearTimeout(timer);
  if (client.isOpen) client.destroy();
}
