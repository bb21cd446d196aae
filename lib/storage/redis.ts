/**
 * Redis storage: pet values in Keyv's keys (@keyv/redis writes `<namespace>::<id>`, Keyv's format),
 * and on the same connection what Keyv cannot do: the id sequence and sorted sets of ids (all pets,
 * and one per status). A page and a create are each one Lua script, so one round trip (a create is
 * atomic). Every key starts with `<namespace>:`; the client fails fast and reconnects by itself.
 * Details: docs/STORAGE.md, "Redis creates and pages".
 */

import { sha1Hex } from "../digest.ts";
import type { Pet, PetStatus } from "../schemas.ts";
import { redactUrl, StorageConfigError, unreachable } from "./config-error.ts";
import { loadDriver } from "./driver.ts";
import type { CreateOnceResult, IdempotencyRecord, ListPage, PetData, PetStorage } from "./port.ts";
import {
  checkNewId,
  indexedId,
  petValues,
  readPet,
  sequenceExhausted,
  serializedPetAround,
  storageClosed,
  storedPet,
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
 * A create, in one step: takes the next id, writes the value (Keyv's key and format), both index
 * entries and, for an idempotent create, the key's record; or, when that record exists, only reads it.
 * KEYS: the sequence, the index of all pets, the index of the pet's status, and (idempotent creates
 * only) the key's record. ARGV: the value's text before and after the id, the prefix of value keys,
 * the largest id; then fingerprint, now, expires at, time to live (ms). The record is
 * "<fingerprint> <pet id> <expires at>"; one that expired by `now` (by the caller's clock) counts as absent.
 */
const CREATE = `
if KEYS[4] then
  local rec = redis.call('GET', KEYS[4])
  if rec then
    local fp, id, exp = string.match(rec, '^(%S+) (%S+) (%S+)$')
    if fp and tonumber(exp) > tonumber(ARGV[6]) then
      if fp ~= ARGV[5] then return {'reused'} end
      return {'replayed', id, redis.call('GET', ARGV[3] .. id) or ''}
    end
  end
end
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if last >= tonumber(ARGV[4]) then return {'exhausted'} end
local id = string.format('%d', redis.call('INCR', KEYS[1]))
redis.call('SET', ARGV[3] .. id, ARGV[1] .. id .. ARGV[2])
redis.call('ZADD', KEYS[2], id, id)
redis.call('ZADD', KEYS[3], id, id)
if KEYS[4] then redis.call('SET', KEYS[4], ARGV[5] .. ' ' .. id .. ' ' .. ARGV[7], 'PX', ARGV[8]) end
return {'created', id}
`;

/**
 * A page in one round trip: the ids above ARGV[1] in the index KEYS[1] (at most ARGV[2]), each
 * followed by its value (key ARGV[3] .. id; nil for a missing one), in one flat array (a nested
 * one costs the client about twice as much to decode). Ids stay the members' text: the client
 * decodes integer replies imprecisely near 2^53.
 */
const PAGE = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf', 'LIMIT', 0, ARGV[2])
if #ids == 0 then return {} end
local keys = {}
for i = 1, #ids do keys[i] = ARGV[3] .. ids[i] end
local values = redis.call('MGET', unpack(keys))
local page = {}
for i = 1, #ids do
  page[2 * i - 1] = ids[i]
  page[2 * i] = values[i]
end
return page
`;

/** A Lua script and its SHA-1, run with EVALSHA (EVAL once when the server does not have it yet). */
interface Script {
  source: string;
  sha: string;
}
const script = (source: string): Script => ({ source, sha: sha1Hex(source) });
const CREATE_SCRIPT = script(CREATE);
const PAGE_SCRIPT = script(PAGE);

interface ScriptRunner {
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(source: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** Runs `lua` by its SHA; a server that does not know it yet (NOSCRIPT) gets its source once. */
function run(client: ScriptRunner, lua: Script, keys: string[], args: string[]): Promise<unknown> {
  const options = { keys, arguments: args };
  return client.evalSha(lua.sha, options).catch((error: unknown) => {
    if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
    return client.eval(lua.source, options);
  });
}

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
    // No time-out per command (the driver would start a timer and an AbortSignal for each, which
    // would only fire while a command waits to be written, and nothing waits: no offline queue).
    // A command that Redis never answers (frozen server, lost network) is ended by the socket
    // time-out, which drops the connection, rejects what waits on it, and reconnects; the core's
    // own time-out answers the caller meanwhile. The pings keep a quiet but healthy connection
    // from looking idle.
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
  // Failures reach callers as rejections; an unheard "error" event would crash the process. The
  // ones before the first connection tell why it failed (a socket time-out before the close it causes).
  const failures: unknown[] = [];
  client.on("error", (error: unknown) => {
    if (!connectedOnce) failures.push(error);
  });
  client.on("ready", () => {
    connectedOnce = true;
  });
  const started = performance.now();
  try {
    await client.connect();
  } catch (error) {
    if (client.isOpen) client.destroy();
    const all = new AggregateError([error, ...failures], (error as Error)?.message);
    throw unreachable("redis", url, 6379, all, performance.now() - started);
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
  const valuePrefix = `${namespace}::`;

  /** One create (idempotent with a record): one script, so one round trip and atomic. */
  async function createOnceOrReplay(data: PetData, record: IdempotencyRecord | undefined): Promise<CreateOnceResult> {
    const [head, tail] = serializedPetAround(values, data);
    const keys = [sequenceKey, indexKey(), indexKey(data.status)];
    const args = [head, tail, valuePrefix, MAX_ID];
    if (record !== undefined) {
      const { scope, key, fingerprint, now, expiresAt } = record;
      keys.push(recordKey(scope, key));
      args.push(fingerprint, String(now), String(expiresAt), String(Math.max(1, Math.ceil(expiresAt - now))));
    }
    const reply = await run(exact, CREATE_SCRIPT, keys, args);
    const [outcome, rawId, rawValue] = (Array.isArray(reply) ? reply : []).map(String);
    if (outcome === "reused") return { conflict: "reused" };
    if (outcome === "exhausted") throw sequenceExhausted("redis");
    const id = checkNewId(Number(rawId), "redis");
    if (outcome === "created") {
      return { pet: { id, name: data.name, categoryId: data.categoryId, status: data.status }, replayed: false };
    }
    if (outcome !== "replayed") throw new Error("redis storage: unexpected reply of the create script");
    return { pet: storedPet(id, rawValue === "" ? undefined : rawValue, values, "redis"), replayed: true };
  }

  return {
    kind: "redis",
    async findOnce({ scope, key, fingerprint, now }: IdempotencyRecord): Promise<CreateOnceResult | undefined> {
      ensureOpen();
      const rec = await client.get(recordKey(scope, key));
      const [fp, rawId, exp] = typeof rec === "string" ? rec.split(" ") : [];
      if (fp === undefined || rawId === undefined || !(Number(exp) > now)) return undefined;
      if (fp !== fingerprint) return { conflict: "reused" };
      const raw = await client.get(`${namespace}::${rawId}`);
      return { pet: storedPet(Number(rawId), raw ?? undefined, values, "redis"), replayed: true };
    },
    async createOnce(data: PetData, record: IdempotencyRecord): Promise<CreateOnceResult> {
      ensureOpen();
      return createOnceOrReplay(data, record);
    },
    async create(data: PetData): Promise<Pet> {
      ensureOpen();
      const result = await createOnceOrReplay(data, undefined);
      if ("conflict" in result) throw new Error("redis storage: a create without a key met a key");
      return result.pet;
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
      const reply = await run(client, PAGE_SCRIPT, [indexKey(status)], [`(${after}`, String(limit), valuePrefix]);
      if (!Array.isArray(reply) || reply.length % 2 !== 0)
        throw new Error("redis storage: unexpected reply of the page script");
      const pets: Pet[] = new Array(reply.length / 2);
      for (let i = 0; i < pets.length; i++) {
        const id = indexedId(reply[2 * i], "redis");
        pets[i] = storedPet(id, reply[2 * i + 1], values, "redis");
      }
      return pets;
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
