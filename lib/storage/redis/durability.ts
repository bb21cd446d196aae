/**
 * `durability: "replicated"`: a write resolves only once `WAIT 1` says one replica has it. WAIT
 * blocks its connection, so writes go out on a connection of their own (no read waits behind a
 * WAIT), and those that arrive while a WAIT is out go together after it with one WAIT for all (a
 * group commit): a slow or missing replica delays a create by two WAITs at most.
 */
import { PetStoreError } from "../../errors.ts";
import { isNoScript, type Script } from "./scripts.ts";

/** The part of a node-redis client the writes use. */
export interface WriteClient {
  sendCommand(args: string[]): Promise<unknown>;
}

export interface ReplicatedWritesOptions {
  /** The write connection, connected (a new one after a failover). */
  connect(): Promise<WriteClient>;
  /** How long one WAIT waits for a replica, ms. */
  waitMs: number;
  /** Scripts the commands run by SHA: loaded on each new connection before the first of them. */
  scripts: Script[];
  /** Told of every failure of the connection (a cluster then looks for its map again). */
  failed(error: unknown): void;
}

interface Pending {
  command: string[];
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Sent again once already, after a NOSCRIPT. */
  again: boolean;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
const settle = (promise: Promise<unknown>): Promise<Outcome> =>
  promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );

/** The answer when no replica confirmed in time: a 503, and the pet may exist (a keyed retry replays it). */
function notReplicated(waitMs: number, acks: unknown): PetStoreError {
  const cause = new Error(
    `redis storage: no replica confirmed the write within ${waitMs} ms (WAIT 1 answered ${String(acks)}); it may still be stored`,
  );
  return new PetStoreError("storage_unavailable", undefined, { cause });
}

/**
 * The replicated writes of one store. @example const reply = await writes.send(["EVALSHA", sha, "3", ...keys, ...args])
 */
export function makeReplicatedWrites({ connect, waitMs, scripts, failed }: ReplicatedWritesOptions) {
  const queue: Pending[] = [];
  let busy = false;
  let loadedOn: WriteClient | undefined;

  /** One batch: the writes waiting once the connection is there, then one WAIT for them all. */
  async function sendBatch(): Promise<void> {
    let client: WriteClient;
    try {
      client = await connect();
    } catch (error) {
      failed(error);
      for (const write of queue.splice(0)) write.reject(error);
      return;
    }
    // Taken after the connect: writes of the meantime join this batch.
    const batch = queue.splice(0);
    // All in one tick, so in this order on the one socket: loads, the writes, then the WAIT.
    const loads =
      loadedOn === client ? [] : scripts.map((s) => settle(client.sendCommand(["SCRIPT", "LOAD", s.source])));
    const replies = batch.map((write) => settle(client.sendCommand(write.command)));
    const waited = settle(client.sendCommand(["WAIT", "1", String(waitMs)]));
    if ((await Promise.all(loads)).every((load) => load.ok)) loadedOn = client;
    const outcomes = await Promise.all(replies);
    const wait = await waited;
    const acks = wait.ok ? Number(wait.value) : Number.NaN;
    if (!wait.ok) failed(wait.error);
    for (const [i, write] of batch.entries()) {
      const outcome = outcomes[i] as Outcome;
      if (!outcome.ok) {
        if (isNoScript(outcome.error) && !write.again) {
          // The server lost its scripts (a restart behind the same address): load, then send again.
          loadedOn = undefined;
          write.again = true;
          queue.push(write);
        } else {
          failed(outcome.error);
          write.reject(outcome.error);
        }
      } else if (acks >= 1) write.resolve(outcome.value);
      else write.reject(wait.ok ? notReplicated(waitMs, acks) : wait.error);
    }
  }

  /** Sends batches until the queue is empty; `busy` falls in the same step as the last look at it. */
  async function drain(): Promise<void> {
    busy = true;
    while (queue.length > 0) {
      await sendBatch().catch((error: unknown) => {
        for (const write of queue.splice(0)) write.reject(error);
      });
    }
    busy = false;
  }

  return {
    /** Sends `command` on the write connection; resolves with its reply once a replica has it. */
    send(command: string[]): Promise<unknown> {
      return new Promise((resolve, reject) => {
        queue.push({ command, resolve, reject, again: false });
        if (!busy) void drain();
      });
    },
  };
}

export type ReplicatedWrites = ReturnType<typeof makeReplicatedWrites>;
