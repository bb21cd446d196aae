/**
 * The Redis storage's connections: one client on a single server, or a cluster client that talks
 * only to the primary owning the store's slot. Both fail fast (no offline queue) and reconnect by
 * themselves; a cluster is asked for its map again while a node fails, as node-redis does so only
 * on a MOVED reply, which a killed primary never sends. Writes that WAIT get a connection of their own.
 */
import { unreachable } from "../config-error.ts";
import { loadDriver } from "../driver.ts";
import type { WriteClient } from "./durability.ts";
import type { ScriptRunner } from "./scripts.ts";

export type RedisDriver = typeof import("@keyv/redis");

/** The commands the store sends, on a client or a cluster alike. */
export interface RedisCommands extends ScriptRunner {
  get(key: string): Promise<unknown>;
  mGet(keys: string[]): Promise<unknown[]>;
  zScore(key: string, member: string): Promise<unknown>;
  zRangeByScore(
    key: string,
    min: string,
    max: string,
    options: { LIMIT: { offset: number; count: number } },
  ): Promise<unknown[]>;
  incr(key: string): Promise<unknown>;
  unlink(keys: string[]): Promise<unknown>;
}

export interface RedisConnection {
  /** What Keyv's adapter is built on: the client, or the cluster. */
  readonly driverClient: unknown;
  /** The store's commands. */
  readonly commands: RedisCommands;
  /** The same, with integer replies as exact decimal text (the client decodes them imprecisely near 2^53). */
  readonly exact: RedisCommands;
  /** The connection of replicated writes: opened on first use, and after a failover to the new primary. */
  writer(): Promise<WriteClient>;
  /** A write failed: a cluster looks for its map again. */
  failed(error: unknown): void;
  /** The keys matching `pattern` on the server that holds the store, in batches (SCAN). */
  scan(pattern: string): AsyncIterable<string[]>;
  /** Resolves when the server (the cluster: the primary of the store's slot) answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

const MAX_RECONNECT_DELAY_MS = 500;
/** RESP_TYPES.NUMBER of @redis/client: the integer reply type, ":". */
export const RESP_INTEGER = 58;

/** The delay before reconnection attempt `retries`: short, and at most 500 ms. */
export const delayReconnect = (retries: number) => Math.min(50 * 2 ** retries, MAX_RECONNECT_DELAY_MS);

/**
 * The client options both kinds share. No time-out per command (the driver would start a timer and
 * an AbortSignal for each, which would only fire while a command waits to be written, and nothing
 * waits: no offline queue). A command that Redis never answers (frozen server, lost network) is
 * ended by the socket time-out, which drops the connection, rejects what waits on it, and
 * reconnects; the core's own time-out answers the caller meanwhile. A reply missing for 2/3 of the
 * time-out (at most 1/3 after the last ping, which keeps a quiet connection from looking idle)
 * ends the connection, so a call rejects within the time-out.
 */
export function makeClientOptions(timeoutMs: number) {
  return {
    disableOfflineQueue: true,
    pingInterval: Math.max(50, Math.floor(timeoutMs / 3)),
    socket: { connectTimeout: timeoutMs, socketTimeout: Math.max(100, Math.ceil((timeoutMs * 2) / 3)) },
  };
}

export interface Closable {
  isOpen: boolean;
  close(): Promise<unknown>;
  destroy(): void;
}

/** Closes gracefully (pending replies arrive), or drops the connection when Redis does not answer. */
export async function closeClient(client: Closable | undefined, timeoutMs: number): Promise<void> {
  if (client === undefined || !client.isOpen) return;
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([client.close().catch(() => {}), gaveUp]);
  clearTimeout(timer);
  if (client.isOpen) client.destroy();
}

/** Rejects after `ms` unless `promise` settles first. */
export async function failAfter<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Opens the client of one server; rejects with StorageConfigError when it does not answer. */
export async function connectServer(url: string, timeoutMs: number): Promise<RedisConnection> {
  const { createClient } = await loadDriver<RedisDriver>("@keyv/redis", "redis");
  let connectedOnce = false;
  const options = makeClientOptions(timeoutMs);
  const client = createClient({
    url,
    ...options,
    socket: {
      ...options.socket,
      // Before the first connection, give up at once so that a wrong URL fails at open; after
      // it, retry forever with a short, bounded delay.
      reconnectStrategy: (retries: number, cause: Error) => (connectedOnce ? delayReconnect(retries) : cause),
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
  let writer: ReturnType<typeof client.duplicate> | undefined;
  return {
    driverClient: client,
    commands: client as unknown as RedisCommands,
    exact: client.withTypeMapping({ [RESP_INTEGER]: String }) as unknown as RedisCommands,
    async writer() {
      if (writer === undefined) {
        writer = client.duplicate();
        writer.on("error", () => {});
      }
      // Once open it reconnects by itself; meanwhile its commands fail at once (no offline queue).
      if (!writer.isOpen) await failAfter(writer.connect(), timeoutMs, "redis write connection");
      return writer as unknown as WriteClient;
    },
    failed() {},
    scan: (pattern) => client.scanIterator({ MATCH: pattern, COUNT: 1000 }),
    async ping() {
      await client.ping();
    },
    async close() {
      await Promise.all([closeClient(client, timeoutMs), closeClient(writer, timeoutMs)]);
    },
  };
}
