/**
 * Redis storage: pet values in Keyv's keys (@keyv/redis writes `<namespace>::<id>`, Keyv's format),
 * and beside them what Keyv cannot do: the id sequence and sorted sets of ids (all pets, and one per
 * status). On a Redis Cluster every key starts with `{<namespace>}:`, one hash tag, so one slot.
 * A create is one script at a guessed id (redis/id-guess.ts), else takes its id, then writes the pet
 * atomically; a page is two commands (the index, and the values), sent together when its pets
 * were guessed (redis/page-guess.ts). docs/STORAGE.md.
 */
import type { Pet, PetStatus } from "../../schemas.ts";
import { redactUrl, StorageConfigError } from "../config-error.ts";
import { loadDriver } from "../driver.ts";
import { blamed, InvalidRecordError, StorageWarning } from "../failures.ts";
import type { CreateOnceResult, IdempotencyRecord, ListPage, PetData, PetStorage } from "../port.ts";
import { REPORT_TO } from "../report-to.ts";
import {
  checkNewId,
  indexedId,
  keyvTextAround,
  makeKeyvPetReader,
  petOfKeyvText,
  petValues,
  type RecordNames,
  readPageSkipping,
  readPet,
  sequenceExhausted,
  storageClosed,
} from "../values.ts";
import { connectCluster } from "./cluster.ts";
import { connectServer, type RedisConnection, type RedisDriver } from "./connection.ts";
import { makeReplicatedWrites } from "./durability.ts";
import { type AtGuess, takeIds } from "./id-guess.ts";
import { guessHolds, makePageGuesses } from "./page-guess.ts";
import { makeRedisRateCounter } from "./rate.ts";
import {
  blameKeys,
  CLAIM,
  NEXT_ID,
  REPAIR_SEQUENCE,
  readReply,
  redisBlamesValue,
  runScript,
  WRITE,
  WRITE_AT,
  WRITE_ONCE_AT,
} from "./scripts.ts";
import { makeRedisTransfer } from "./transfer.ts";

/** Where a Redis store keeps its pets: one server (`url`) or a Redis Cluster (`cluster`), never both. */
export interface RedisStorageOptions {
  /** One server: `redis://[user:password@]host[:port][/db]`, or `rediss://…` for TLS. */
  url?: string;
  /**
   * A Redis Cluster instead (node-redis's `createCluster` shape): a few of its nodes, all
   * `redis://` or all `rediss://`; every node gets the first one's user and password.
   * @example { rootNodes: [{ url: "redis://10.0.0.1:6379" }, { url: "redis://10.0.0.2:6379" }] }
   */
  cluster?: { rootNodes: { url: string }[] };
  /** Prefix of every key this store writes (default "petstore"): letters, digits, `_`, `.`, `-`. */
  namespace?: string;
  /** Connect and command time-out in ms (default 2000). */
  operationTimeoutMs?: number;
  /**
   * "async" (the default): a create is answered once the primary has it; replicas copy it later,
   * so a failover can lose the last ones. "replicated": once one replica has it too (`WAIT 1`),
   * else `503` (the pet may exist: a retry with its Idempotency-Key replays it).
   */
  durability?: "async" | "replicated";
}

const NAMESPACE = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_ID = "9007199254740991";
const SERVER_URL = /^rediss?:\/\//i;

/** The places of a store's data: `<namespace>:…` on one server, `{<namespace>}:…` (one slot) on a cluster. */
function nameKeys(namespace: string, cluster: boolean) {
  const prefix = cluster ? `{${namespace}}` : namespace;
  return {
    /** Keyv's namespace: @keyv/redis writes each value as `<prefix>::<id>`. */
    prefix,
    sequence: `${prefix}:seq`,
    index: (status?: PetStatus) => (status === undefined ? `${prefix}:ids` : `${prefix}:ids:${status}`),
    value: (id: string) => `${prefix}::${id}`,
    record: (scope: string, key: string) => `${prefix}:idem:${scope.length}:${scope}:${key}`,
  };
}

/** A create's id was already taken by a stored pet: the sequence stands behind them (a restored database). */
class IdTaken extends Error {}

/** A key's record's time to live in ms, as PX takes it: at least 1. */
const ttlOf = ({ expiresAt, now }: IdempotencyRecord) => String(Math.max(1, Math.ceil(expiresAt - now)));

interface Checked {
  target: { url: string } | { rootNodes: string[] };
  namespace: string;
  timeoutMs: number;
  replicated: boolean;
}

function checkUrl(url: unknown, what: string): string {
  if (typeof url !== "string" || !SERVER_URL.test(url) || !URL.canParse(url)) {
    throw new StorageConfigError(
      `redis storage: ${what} must look like redis://host:6379 or rediss://host:6380 (got ${JSON.stringify(redactUrl(String(url)))})`,
    );
  }
  return url;
}

function checkCluster(cluster: unknown): string[] {
  const nodes = (cluster as { rootNodes?: unknown } | null)?.rootNodes;
  const extra = Object.keys(cluster ?? {}).filter((name) => name !== "rootNodes");
  if (!Array.isArray(nodes) || nodes.length === 0 || extra.length > 0) {
    throw new StorageConfigError(
      `redis storage: cluster must be { rootNodes: [{ url: "redis://host:port" }, …] }${extra.length > 0 ? ` (unknown: ${extra.join(", ")})` : ""}`,
    );
  }
  const urls = nodes.map((node: { url?: unknown } | null, i) => checkUrl(node?.url, `cluster.rootNodes[${i}].url`));
  if (new Set(urls.map((url) => new URL(url).protocol)).size > 1) {
    throw new StorageConfigError("redis storage: cluster.rootNodes must be all redis:// or all rediss://");
  }
  if (urls.some((url) => !["", "/", "/0"].includes(new URL(url).pathname))) {
    throw new StorageConfigError(
      "redis storage: a Redis Cluster has only database 0 (a root node's URL names another)",
    );
  }
  return urls;
}

function checkOptions(options: RedisStorageOptions): Checked {
  const { url, cluster } = options ?? {};
  if ((url === undefined) === (cluster === undefined)) {
    throw new StorageConfigError(
      "redis storage: give either url (one server) or cluster: { rootNodes: [{ url }, …] } (a Redis Cluster)",
    );
  }
  const target = url === undefined ? { rootNodes: checkCluster(cluster) } : { url: checkUrl(url, "url") };
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
  const durability = options.durability ?? "async";
  if (durability !== "async" && durability !== "replicated") {
    throw new StorageConfigError(
      `redis storage: durability must be "async" or "replicated" (got ${JSON.stringify(durability)})`,
    );
  }
  return { target, namespace, timeoutMs, replicated: durability === "replicated" };
}

/**
 * Opens a Redis storage on one server or a cluster; rejects with StorageConfigError when the driver
 * is missing or Redis does not answer.
 * @example createPetStore({ storage: await redisStorage({ url: "redis://127.0.0.1:6379", namespace: "shop" }), auth })
 * @example await redisStorage({ cluster: { rootNodes: [{ url: "redis://10.0.0.1:6379" }] }, durability: "replicated" })
 */
export async function redisStorage(options: RedisStorageOptions): Promise<PetStorage> {
  const { target, namespace, timeoutMs, replicated } = checkOptions(options);
  const { default: KeyvRedis } = await loadDriver<RedisDriver>("@keyv/redis", "redis");
  const keys = nameKeys(namespace, "rootNodes" in target);
  const connection =
    "rootNodes" in target
      ? await connectCluster(target.rootNodes, keys.sequence, timeoutMs)
      : await connectServer(target.url, timeoutMs);
  const store = new KeyvRedis(connection.driverClient as ConstructorParameters<typeof KeyvRedis>[0], {
    namespace: keys.prefix,
    throwOnErrors: true,
    throwOnConnectError: true,
  });
  return buildStore(connection, petValues(store, { namespace: keys.prefix, keyPrefix: false }), keys, {
    timeoutMs,
    replicated,
  });
}

/** The store's operations on an open connection. */
function buildStore(
  connection: RedisConnection,
  values: ReturnType<typeof petValues>,
  keys: ReturnType<typeof nameKeys>,
  { timeoutMs, replicated }: { timeoutMs: number; replicated: boolean },
): PetStorage {
  const { commands, exact } = connection;
  // WAIT's own time-out: a create waits for two at most (the one out, then its own), within the call's.
  const writes = replicated
    ? makeReplicatedWrites({
        connect: connection.writer,
        waitMs: Math.max(1, Math.floor(timeoutMs / 4)),
        scripts: [WRITE],
        failed: connection.failed,
      })
    : undefined;
  // Replicated writes go on a connection of their own, out of order with INCR: no guessed ids then.
  const ids = takeIds(!replicated);
  const pages = makePageGuesses<PetStatus>(keys.value);
  const names: RecordNames = {
    backend: "redis",
    pet: (id) => keys.value(String(id)),
    index: keys.index(),
    sequence: keys.sequence,
  };
  const readPageValue = makeKeyvPetReader(values, names);
  /** What no answer shows (the sequence repaired): the store's onError once it hands it over. */
  let report: (error: Error) => void = () => {};
  let closing: Promise<void> | undefined;
  // A closed store refuses calls before they reach the driver (@keyv/redis would even reconnect).
  const ensureOpen = () => {
    if (closing !== undefined) throw storageClosed("redis");
  };

  /** The error of a script that answered `invalid`: which record (`record`, `sequence`) it could not read. */
  const invalidKey = (which: string | undefined, record: IdempotencyRecord | undefined) =>
    which === "record" && record !== undefined
      ? new InvalidRecordError(
          "redis",
          keys.record(record.scope, record.key),
          "not a key record (<fingerprint> <pet id> <expires at>)",
        )
      : new InvalidRecordError("redis", keys.sequence, "the id sequence does not hold an integer");

  /** The second step of a create, on the write connection and confirmed by a replica when replicated. */
  function writePet(keyList: string[], args: string[]): Promise<unknown> {
    if (writes === undefined) return runScript(commands, WRITE, keyList, args);
    return writes.send(["EVALSHA", WRITE.sha, String(keyList.length), ...keyList, ...args]);
  }

  /** The pet of a replay: its value, and when replicated, proof that a replica has it (a write after it, WAITed). */
  async function replayOf(rawId: string): Promise<CreateOnceResult> {
    const [raw] = await Promise.all([commands.get(keys.value(rawId)), writes?.send(["INCRBY", keys.sequence, "0"])]);
    return { pet: petOfKeyvText(Number(rawId), raw ?? undefined, values, names), replayed: true };
  }

  /** A create in one round trip at `id` (with a key: unless its record decides), and what it tells the guesses. */
  async function createAt(
    id: number,
    data: PetData,
    record: IdempotencyRecord | undefined,
  ): Promise<AtGuess<CreateOnceResult>> {
    const [head, tail] = keyvTextAround(values, data);
    const rawId = String(id);
    const valueKeys = [keys.value(rawId), keys.index(), keys.index(data.status)];
    let reply: string[];
    if (record === undefined) {
      const keyList = [keys.sequence, ...valueKeys];
      reply = readReply(await blameKeys(runScript(commands, WRITE_AT, keyList, [rawId, head + rawId + tail]), keyList));
    } else {
      const { scope, key, fingerprint, now, expiresAt } = record;
      const keyList = [keys.record(scope, key), keys.sequence, ...valueKeys];
      const args = [fingerprint, String(now), rawId, head + rawId + tail, String(expiresAt), ttlOf(record)];
      reply = readReply(await blameKeys(runScript(exact, WRITE_ONCE_AT, keyList, args), keyList));
    }
    const [outcome, replayId] = reply;
    if (outcome === "invalid") throw invalidKey(replayId, record);
    if (outcome === "taken") throw new IdTaken();
    if (outcome === "created") {
      const pet = { id, name: data.name, categoryId: data.categoryId, status: data.status };
      return { guess: "taken", result: { pet, replayed: false } };
    }
    if (outcome === "moved") return { guess: "missed" };
    if (outcome === "reused") return { guess: "unused", result: { conflict: "reused" } };
    if (outcome === "replayed" && replayId !== undefined) return { guess: "unused", result: await replayOf(replayId) };
    throw new Error("redis storage: unexpected reply of the write-at script");
  }

  /** The next id of a plain create that was not guessed, taken by a script that checks the sequence. */
  async function takeNextId(): Promise<number> {
    const next = async () => {
      const keyList = [keys.sequence];
      const [outcome, id] = readReply(await blameKeys(runScript(exact, NEXT_ID, keyList, [MAX_ID]), keyList));
      if (outcome === "invalid") throw invalidKey(id, undefined);
      if (outcome === "exhausted") throw sequenceExhausted(names);
      if (outcome !== "next" || id === undefined)
        throw new Error("redis storage: unexpected reply of the next-id script");
      return checkNewId(Number(id), names);
    };
    return ids.incr(next);
  }

  /**
   * Moves the sequence past the highest id in the index (a database restored from a backup made
   * before its last creates); resolves whether it moved, and says so once.
   */
  async function repairSequence(): Promise<boolean> {
    const keyList = [keys.sequence, keys.index()];
    const repair = () => blameKeys(runScript(exact, REPAIR_SEQUENCE, keyList, []), keyList);
    const [outcome, last, stored] = readReply(await ids.uncounted(repair));
    if (outcome === "invalid") throw invalidKey(last, undefined);
    if (outcome !== "moved") return false;
    report(
      new StorageWarning(
        "redis",
        `the id sequence ${keys.sequence} stood at ${last}, behind the stored pets: moved to ${stored}`,
      ),
    );
    return true;
  }

  /**
   * One create: an id already taken by a stored pet (the sequence behind them) moves the sequence
   * and tries once more.
   */
  async function createOnceOrReplay(data: PetData, record?: IdempotencyRecord): Promise<CreateOnceResult> {
    try {
      return await createOnceAtNextId(data, record);
    } catch (error) {
      if (!(error instanceof IdTaken)) throw error;
      if (!(await repairSequence())) {
        throw new InvalidRecordError(
          "redis",
          keys.sequence,
          "a new id is taken, yet the sequence is not behind the index",
        );
      }
      return createOnceAtNextId(data, record);
    }
  }

  /**
   * One create: at a guessed id in one script, or it takes the next id (or finds the key's record),
   * then writes the pet (and the record).
   */
  async function createOnceAtNextId(data: PetData, record?: IdempotencyRecord): Promise<CreateOnceResult> {
    const atGuess = await ids.atGuess((id) => createAt(id, data, record));
    if (atGuess !== undefined) return atGuess;
    let rawId: string;
    if (record === undefined) {
      rawId = String(await takeNextId());
    } else {
      const recordKey = keys.record(record.scope, record.key);
      const claimArgs = [record.fingerprint, String(record.now), MAX_ID];
      const claimKeys = [recordKey, keys.sequence];
      const claim = () => blameKeys(runScript(exact, CLAIM, claimKeys, claimArgs), claimKeys);
      const [outcome, id] = readReply(await ids.uncounted(claim));
      if (outcome === "invalid") throw invalidKey(id, record);
      if (outcome === "reused") return { conflict: "reused" };
      if (outcome === "exhausted") throw sequenceExhausted(names);
      if (outcome === "replayed" && id !== undefined) return replayOf(id);
      if (outcome !== "next" || id === undefined)
        throw new Error("redis storage: unexpected reply of the claim script");
      rawId = id;
    }
    const id = checkNewId(Number(rawId), names);
    const [head, tail] = keyvTextAround(values, data);
    const keyList = [keys.value(rawId), keys.index(), keys.index(data.status)];
    const args = [rawId, head + rawId + tail];
    if (record !== undefined) {
      const { scope, key, fingerprint, now, expiresAt } = record;
      keyList.push(keys.record(scope, key));
      args.push(fingerprint, String(now), String(expiresAt), ttlOf(record));
    }
    const [outcome, replayId] = readReply(await blameKeys(writePet(keyList, args), keyList));
    if (outcome === "invalid") throw invalidKey(replayId, record);
    if (outcome === "taken") throw new IdTaken();
    if (outcome === "created") {
      return { pet: { id, name: data.name, categoryId: data.categoryId, status: data.status }, replayed: false };
    }
    if (outcome === "reused") return { conflict: "reused" };
    if (outcome === "replayed" && replayId !== undefined) return replayOf(replayId);
    throw new Error("redis storage: unexpected reply of the write script");
  }

  /** Up to `count` index rows of `status` with ids above `after`, each with its value's text: a page's slow path. */
  async function readRows(status: PetStatus | undefined, after: number, count: number) {
    const ids = await blameKeys(
      commands.zRangeByScore(keys.index(status), `(${after}`, "+inf", { LIMIT: { offset: 0, count } }),
      [keys.index(status)],
    );
    if (ids.length === 0) return [];
    const raws = await commands.mGet(ids.map((id) => keys.value(String(id))));
    return ids.map((id, i) => ({ id: indexedId(id, names), raw: raws[i] }));
  }
  const readRow = (row: { id: number; raw: unknown }) => readPageValue(row.id, row.raw);

  return {
    kind: "redis",
    // Every pet it returns was checked where it was decoded (lib/storage/values.ts).
    trustedPets: true,
    async findOnce({ scope, key, fingerprint, now }: IdempotencyRecord): Promise<CreateOnceResult | undefined> {
      ensureOpen();
      const recordKey = keys.record(scope, key);
      const rec = await blameKeys(commands.get(recordKey), [recordKey]);
      if (rec === null || rec === undefined) return undefined;
      // A record that cannot be read fails closed: never a second pet for its key.
      const [fp, rawId, exp, ...rest] = String(rec).split(" ");
      if (fp === undefined || !/^[0-9]+$/.test(rawId ?? "") || Number.isNaN(Number(exp)) || rest.length > 0) {
        throw new InvalidRecordError("redis", recordKey, "not a key record (<fingerprint> <pet id> <expires at>)");
      }
      if (rawId === undefined || !(Number(exp) > now)) return undefined;
      if (fp !== fingerprint) return { conflict: "reused" };
      return replayOf(rawId);
    },
    async createOnce(data: PetData, record: IdempotencyRecord): Promise<CreateOnceResult> {
      ensureOpen();
      return createOnceOrReplay(data, record);
    },
    async create(data: PetData): Promise<Pet> {
      ensureOpen();
      const result = await createOnceOrReplay(data);
      if ("conflict" in result) throw new Error("redis storage: a create without a key met a key");
      return result.pet;
    },
    async get(id: number): Promise<Pet | undefined> {
      ensureOpen();
      return readPet(
        id,
        names,
        async () => (await blameKeys(commands.zScore(keys.index(), String(id)), [keys.index()])) !== null,
        () => blameKeys(values.get(String(id)), [keys.value(String(id))]),
      );
    },
    async list(page: ListPage): Promise<Pet[]> {
      ensureOpen();
      const { status, after, limit } = page;
      // The guessed values are asked with the index, in the same write: one round trip when right.
      const guess = pages.guessOf(status, after, limit);
      let ids: unknown[];
      let guessed: unknown[] | undefined;
      try {
        [ids, guessed] = await Promise.all([
          commands.zRangeByScore(keys.index(status), `(${after}`, "+inf", { LIMIT: { offset: 0, count: limit } }),
          guess === undefined ? undefined : commands.mGet(guess.valueKeys),
        ]);
      } catch (error) {
        throw blamed(error, "redis", keys.index(status), redisBlamesValue);
      }
      // Ids stay the members' text: the client decodes integer replies imprecisely near 2^53.
      const petsOf = (numbers: readonly number[], raws: unknown[]) =>
        ids.map((_, i) => readPageValue(numbers[i] as number, raws[i]));
      try {
        if (guess !== undefined && guessed !== undefined && guessHolds(guess, ids))
          return petsOf(guess.numbers, guessed);
        const read = ids.map(String);
        const numbers = ids.map((id) => indexedId(id, names));
        pages.learn(status, after, limit, read, numbers);
        return read.length === 0 ? [] : petsOf(numbers, await commands.mGet(read.map(keys.value)));
      } catch (error) {
        if (!(error instanceof InvalidRecordError) || page.onInvalid === undefined) throw error;
        return readPageSkipping(page, (from, count) => readRows(status, from, count), readRow);
      }
    },
    async ping() {
      ensureOpen();
      await connection.ping();
    },
    close() {
      closing ??= connection.close();
      return closing;
    },
    /** The store's onError: told of repairs. */
    [REPORT_TO]: (onError: (error: Error) => void) => {
      report = onError;
    },
    transfer: makeRedisTransfer({ connection, keys, values, ids, ensureOpen, names }),
    rateCounter: makeRedisRateCounter(connection, keys.prefix, ensureOpen),
    /**
     * Deletes every key of this store (values, sequence, indexes and any other record under its
     * prefix), found with SCAN, never KEYS or FLUSHDB: other namespaces are untouched.
     */
    async clear() {
      ensureOpen();
      await ids.uncounted(async () => {
        for await (const batch of connection.scan(`${keys.prefix}:*`)) {
          if (batch.length > 0) await commands.unlink(batch);
        }
      });
    },
  };
}
