/**
 * Workers (PETSTORE_WORKERS): the primary process of a `node:cluster` forks the workers, each the
 * whole standalone server on the same port and shared storage; it serves no request itself, starts
 * and replaces workers (with a back-off against crash loops) and stops them. A worker tells the
 * primary `listening` or `failed`; the primary tells a worker `stop`.
 */
import cluster, { type Worker } from "node:cluster";
import { ConfigError } from "./config.ts";
import type { Logger } from "./logger.ts";

export type WorkerMessage =
  | { type: "petstore:listening"; url: string }
  | { type: "petstore:failed"; message: string; code: number };

export const STOP_MESSAGE = { type: "petstore:stop" } as const;

export interface ClusterOptions {
  /** How many workers serve the port. */
  count: number;
  logger: Logger;
  /** Environment variables every worker gets besides the primary's (a generated key). */
  env?: Record<string, string>;
  /** Time a stopping worker gets before it is killed (ms; its own grace plus a margin). */
  stopTimeoutMs?: number;
}

export interface RunningCluster {
  /** The API's URL as the workers serve it, e.g. "http://127.0.0.1:8080/v1". */
  url: string;
  /** The pids of the workers now serving. */
  pids(): number[];
  /** Stops every worker gracefully (each finishes its requests in flight); resolves once all exited. Idempotent. */
  close(): Promise<void>;
}

/** The pause before a dead worker is replaced: none for a first death, then doubling up to 30 s. */
export function restartDelay(recentDeaths: number): number {
  return recentDeaths <= 1 ? 0 : Math.min(30_000, 500 * 2 ** (recentDeaths - 2));
}

/** Deaths within this window count as a crash loop. */
const CRASH_WINDOW_MS = 60_000;

const isMessage = (m: unknown): m is WorkerMessage =>
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
        if (message.type !== "petstore:listening") return;
        serving.set(worker.id, worker);
        if (starting) {
          if (serving.size === count) {
            starting = false;
            resolve({ url: message.url, pids, close: stopAll });
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

    function pids(): number[] {
      return [...serving.values()].map((w) => w.process.pid as number);
    }

    /** Asks every worker to stop, and kills those that do not exit in time. */
    function stopAll(): Promise<void> {
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
                if (worker.isConnected()) worker.send(STOP_MESSAGE, (error: Error | null) => error && worker.kill());
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
 * In a worker: calls `stop` when the primary asks (once), and tells the primary how starting went.
 */
export const inWorker = {
  get active(): boolean {
    return cluster.isWorker;
  },
  onStop(stop: () => void): void {
    process.on("message", (message: unknown) => {
      if (isMessage(message as WorkerMessage) && (message as { type: string }).type === STOP_MESSAGE.type) stop();
    });
  },
  tell(message: WorkerMessage): Promise<void> {
    return new Promise((resolve) => {
      if (process.send === undefined || !process.connected) return resolve();
      process.send(message, undefined, {}, () => resolve());
    });
  },
};
