/**
 * Workers (PETSTORE_WORKERS): the primary process of a `node:cluster` forks the workers, each the
 * whole standalone server on the same port and shared storage; it serves no request itself, starts
 * and replaces workers (with a back-off against crash loops) and stops them. A worker tells the
 * primary `listening`, `failed` or a `signal` it got; the primary tells a worker `stop`.
 */
import cluster, { type Worker } from "node:cluster";
import { ConfigError } from "./config.ts";
import type { Logger } from "./logger.ts";

export type WorkerMessage =
  | { type: "petstore:listening"; url: string }
  | { type: "petstore:failed"; message: string; code: number }
  /** A signal that reached the worker (`at`: when, in epoch ms), for the primary to count as a request to stop. */
  | { type: "petstore:signal"; signal: NodeJS.Signals; at: number };

/** The primary's message to a worker: stop gracefully (`signal`: the one that started the stop). */
export interface StopMessage {
  type: "petstore:stop";
  signal: NodeJS.Signals;
}

/** The primary's message to a worker: read the keys file again (the primary got SIGHUP). */
export interface ReloadMessage {
  type: "petstore:reload";
}

export interface ClusterOptions {
  /** How many workers serve the port. */
  count: number;
  logger: Logger;
  /** Environment variables every worker gets besides the primary's (a generated key). */
  env?: Record<string, string>;
  /** Time a stopping worker gets before it is killed (ms; its own grace plus a margin). */
  stopTimeoutMs?: number;
  /** Called with each signal a worker got and passed on (the worker does not stop by itself). */
  onSignal?: (signal: NodeJS.Signals, at: number, worker: number) => void;
}

export interface RunningCluster {
  /** The API's URL as the workers serve it, e.g. "http://127.0.0.1:8080/v1". */
  url: string;
  /** The pids of the workers now serving. */
  pids(): number[];
  /**
   * Stops every worker gracefully (each finishes its requests in flight); resolves once all exited.
   * Idempotent. `signal` is the one that started the stop, for the workers' logs.
   */
  close(signal?: NodeJS.Signals): Promise<void>;
  /** Tells every worker to read the keys file again. */
  reload(): void;
}

/** The pause before a dead worker is replaced: none for a first death, then doubling up to 30 s. */
export function restartDelay(recentDeaths: number): number {
  return recentDeaths <= 1 ? 0 : Math.min(30_000, 500 * 2 ** (recentDeaths - 2));
}

/** Deaths within this window count as a crash loop. */
const CRASH_WINDOW_MS = 60_000;

const isMessage = (m: unknown): m is WorkerMessage | StopMessage | ReloadMessage =>
  typeof m === "object" && m !== null && typeof (m as { type?: unknown }).type === "string";

/**
 * Forks the workers and resolves once every one of them is listening. Rejects with a ConfigError
 * carrying the first worker's one-line reason when one cannot start (the others are stopped).
 */
export function startCluster(options: ClusterOptions): Promise<RunningCluster> {
  const { count, logger } = options;
  const stopTimeoutMs = options.stopTimeoutMs ?? 15_000;
  // Workers run the same program with the same Node flags (`--import tsx` from a checkout).
  cluster.setupPrimary({ execArgv: process.execArgv });
  const serving = new Map<number, Worker>();
  const deaths: number[] = [];
  let starting = true;
  let stopping: Promise<void> | undefined;

  return new Promise<RunningCluster>((resolve, reject) => {
    const fail = (message: string) => {
      if (!starting) return;
      starting = false;
      void stopAll().then(() => reject(new ConfigError(message)));
    };

    function fork(): Worker {
      const worker = cluster.fork(options.env ?? {});
      let failure: string | undefined;
      worker.on("message", (message: unknown) => {
        if (!isMessage(message)) return;
        if (message.type === "petstore:failed") {
          failure = message.message;
          return;
        }
        if (message.type === "petstore:signal") {
          options.onSignal?.(message.signal, message.at, worker.process.pid as number);
          return;
        }
        if (message.type !== "petstore:listening") return;
        serving.set(worker.id, worker);
        if (starting) {
          if (serving.size === count) {
            starting = false;
            resolve({ url: message.url, pids, close: stopAll, reload });
          }
        } else {
          logger.info({ worker: worker.process.pid }, "worker started");
        }
      });
      worker.on("exit", (code, signal) => {
        serving.delete(worker.id);
        if (stopping !== undefined) return;
        if (starting) {
          fail(failure ?? `a worker exited while starting (${signal ?? `code ${code}`})`);
          return;
        }
        const now = Date.now();
        deaths.push(now);
        while (deaths.length > 0 && (deaths[0] as number) < now - CRASH_WINDOW_MS) deaths.shift();
        const delay = restartDelay(deaths.length);
        logger.warn(
          { worker: worker.process.pid, code, signal, restartInMs: delay, ...(failure ? { reason: failure } : {}) },
          "worker died: starting another",
        );
        setTimeout(() => {
          if (stopping === undefined) fork();
        }, delay).unref();
      });
      return worker;
    }

    function reload(): void {
      const message: ReloadMessage = { type: "petstore:reload" };
      for (const worker of serving.values()) if (worker.isConnected()) worker.send(message);
    }

    function pids(): number[] {
      return [...serving.values()].map((w) => w.process.pid as number);
    }

    /** Asks every worker to stop, and kills those that do not exit in time. */
    function stopAll(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
      const stop: StopMessage = { type: "petstore:stop", signal };
      stopping ??= (async () => {
        const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
        await Promise.all(
          workers.map(
            (worker) =>
              new Promise<void>((done) => {
                if (worker.isDead()) return done();
                const timer = setTimeout(() => {
                  logger.warn({ worker: worker.process.pid }, "worker did not stop in time: killing it");
                  worker.process.kill("SIGKILL");
                }, stopTimeoutMs);
                worker.once("exit", () => {
                  clearTimeout(timer);
                  done();
                });
                if (worker.isConnected()) worker.send(stop, (error: Error | null) => error && worker.kill());
                else worker.process.kill("SIGTERM");
              }),
          ),
        );
      })();
      return stopping;
    }

    for (let i = 0; i < count; i++) fork();
  });
}

/**
 * In a worker: calls `stop` when the primary asks, tells the primary how starting went, and passes
 * on the signals that reach the worker.
 */
export const inWorker = {
  get active(): boolean {
    return cluster.isWorker;
  },
  onStop(stop: (signal: NodeJS.Signals) => void): void {
    process.on("message", (message: unknown) => {
      if (isMessage(message) && message.type === "petstore:stop") stop(message.signal);
    });
  },
  onReload(reload: () => void): void {
    process.on("message", (message: unknown) => {
      if (isMessage(message) && message.type === "petstore:reload") reload();
    });
  },
  /** Passes a signal on to the primary; false when there is no primary to tell (its channel is closed). */
  passOn(signal: NodeJS.Signals): boolean {
    if (process.send === undefined || !process.connected) return false;
    process.send({ type: "petstore:signal", signal, at: Date.now() } satisfies WorkerMessage);
    return true;
  },
  tell(message: WorkerMessage): Promise<void> {
    return new Promise((resolve) => {
      if (process.send === undefined || !process.connected) return resolve();
      process.send(message, undefined, {}, () => resolve());
    });
  },
};
