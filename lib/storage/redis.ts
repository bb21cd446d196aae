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
 *
 * An idempotent create is one Lua script, so one round trip and atomic: it checks the key's
 * record, takes the next id, writes the value (Keyv's key and format), both index entries and the
 * record `<namespace>:idem:<scope length>:<scope>:<key>` with its expiry (`PX`), or only reads
 * the record. Redis removes expired records itself.
 */

import { createHash } from "node:crypto";
import type { Pet, PetStatus } from "../schemas.ts";
import { reason, redactUrl, StorageConfigError } from "./config-error.ts";
import { loadDriver } from "./driver.ts";
import type { CreateOnceResult, IdempotencyRecord, ListPage, PetData, PetStorage } from "./port.ts";
import {
  checkNewId,
  indexedId,
  petValues,
  readPet,
  readPets,
  sequenceExhausted,
  serializedPetAround,
  storageClosed,
  toPet,
  writePet,
} from "./values.ts";

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

/**
 * KEYS: the key's record, the sequence, the index of all pets, the index of the pet's status.
 * ARGV: fingerprint, now, expires at, time to live (ms), the value's text before and after the
 * id, the prefix of value keys, the largest id. The record is "<fingerprint> <pet id> <expires at>";
 * one that expired by `now` (by the caller's clock) counts as absent.
 */
const CREATE_ONCE = `
local rec = redis.call('GET', KEYS[1])
if rec then
  local fp, id, exp = string.match(rec, '^(%S+) (%S+) (%S+)$')
  if fp and tonumber(exp) > tonumber(ARGV[2]) then
    if fp ~= ARGV[1] then return {'reused'} end
    return {'replayed', id, redis.call('GET', ARGV[7] .. id) or ''}
  end
end
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if last >= tonumber(ARGV[8]) then return {'exhausted'} end
local id = string.format('%d', redis.call('INCR', KEYS[2]))
redis.call('SET', ARGV[7] .. id, ARGV[5] .. id .. ARGV[6])
redis.call('ZADD', KEYS[3], id, id)
redis.call('ZADD', KEYS[4], id, id)
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. id .. ' ' .. ARGV[3], 'PX', ARGV[4])
return {'created', id}
`;
const CREATE_ONCE_SHA = createHash("sha1").update(CREATE_ONCE).digest("hex");
const MAX_ID = "9007199254740991";

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
    throw new StorageConfigError(`cannot reach redis at ${redactUrl(url)}: ${reason(error)}`, { cause: error });
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

  const recordKey = (scope: string, key: string) => `${namespace}:idem:${scope.length}:${scope}:${key}`;

  return {
    kind: "redis",
    async findOnce({ scope, key, fingerprint, now }: IdempotencyRecord): Promise<CreateOnceResult | undefined> {
      ensureOpen();
      const rec = await client.get(recordKey(scope, key));
      const [fp, rawId, exp] = typeof rec === "string" ? rec.split(" ") : [];
      if (fp === undefined || rawId === undefined || !(Number(exp) > now)) return undefined;
      if (fp !== fingerprint) return { conflict: "reused" };
      const id = Number(rawId);
      return { pet: toPet(await values.get(rawId), id, "redis"), replayed: true };
    },
    async createOnce(data: PetData, record: IdempotencyRecord): Promise<CreateOnceResult> {
      ensureOpen();
      const { scope, key, fingerprint, now, expiresAt } = record;
      const [head, tail] = await serializedPetAround(values, data);
      const script = {
        keys: [recordKey(scope, key), sequenceKey, indexKey(), indexKey(data.status)],
        arguments: [
          fingerprint,
          String(now),
          String(expiresAt),
          String(Math.max(1, Math.ceil(expiresAt - now))),
          head,
          tail,
          `${namespace}::`,
          MAX_ID,
        ],
      };
      let reply: unknown;
      try {
        reply = await exact.evalSha(CREATE_ONCE_SHA, script);
      } catch (error) {
        if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
        reply = await exact.eval(CREATE_ONCE, script);
      }
      const [outcome, rawId, rawValue] = (Array.isArray(reply) ? reply : []).map(String);
      if (outcome === "reused") return { conflict: "reused" };
      if (outcome === "exhausted") throw sequenceExhausted("redis");
      const id = checkNewId(Number(rawId), "redis");
      if (outcome === "created") {
        return { pet: { id, name: data.name, categoryId: data.categoryId, status: data.status }, replayed: false };
      }
      if (outcome !== "replayed") throw new Error(`redis storage: unexpected reply of the create script`);
      const value = rawValue === undefined || rawValue === "" ? undefined : await values.deserialize?.(rawValue);
      return { pet: toPet((value as { value?: unknown } | undefined)?.value, id, "redis"), replayed: true };
    },
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
