/**
 * The socket targets of the conformance suite: the fetch handler served by `Bun.serve`,
 * `Deno.serve` (test/support/fetch-child.ts) and workerd through Miniflare (the library bundled
 * with esbuild as a Worker, test/support/fetch-worker.ts). One child process a runtime, started
 * on first use; each session resets its store through the child's own channel (stdin, or a
 * scheduled event for the Worker), never over HTTP.
 */
import { fileURLToPath } from "node:url";
import type { LineChild, Runtime } from "../support/runtimes.ts";
import { runtimeAvailable, startChild } from "../support/runtimes.ts";
import { bundleWorker, startWorker } from "../support/worker.ts";
import type { Target } from "./targets.ts";
import { overHttp } from "./targets.ts";

const CHILD = fileURLToPath(new URL("../support/fetch-child.ts", import.meta.url));
const WORKER = fileURLToPath(new URL("../support/fetch-worker.ts", import.meta.url));

interface Server {
  port: number;
  command(line: string): Promise<void>;
  stop(): Promise<void>;
}

const running = new Map<string, Promise<Server>>();

/**
 * `keepAlive: false`: a new connection a request. workerd (as Miniflare runs it) closes the
 * connection after an early answer to a body it did not read and drops the `Connection: close`
 * the adapter sets; test/adapters/fetch-runtimes.test.ts shows what each runtime does there.
 */
function socketTarget(
  name: string,
  start: () => Promise<Server>,
  keepAlive = true,
  hostCannot?: Target["hostCannot"],
): Target {
  return {
    name,
    ...(hostCannot === undefined ? {} : { hostCannot }),
    // The published suite's own client keeps connections alive: not for workerd (above).
    overSocket: keepAlive,
    async open() {
      let server = running.get(name);
      if (server === undefined) {
        server = start();
        running.set(name, server);
      }
      const { port, command } = await server;
      await command("reset");
      const client = overHttp(port, { keepAlive });
      return {
        url: client.url,
        send: client.send,
        async close() {
          client.close();
        },
      };
    },
  };
}

function runtimeTarget(runtime: Runtime, serve: string): Target {
  return socketTarget(`fetch handler on ${serve} (socket)`, async () => {
    const child: LineChild = await startChild(runtime, CHILD);
    return child;
  });
}

const workerd = socketTarget(
  "fetch handler on workerd/Miniflare (socket)",
  async () => {
    const { url, mf } = await startWorker(await bundleWorker(WORKER));
    // The worker's scheduled() (typed loosely by Miniflare): runs the handler and says how it went.
    const worker = (await mf.getWorker()) as unknown as {
      scheduled(event: { cron: string }): Promise<{ outcome: string }>;
    };
    return {
      port: Number(url.port),
      async command(line) {
        const result = await worker.scheduled({ cron: line });
        if (result.outcome !== "ok") throw new Error(`workerd: ${line.slice(0, 60)}: ${result.outcome}`);
      },
      stop: () => mf.dispose(),
    };
  },
  false,
  {
    cases: /^compression: /,
    why: "Miniflare's stand-in for Cloudflare's front line compresses answers but keeps their strong ETag (Cloudflare's own weakens it)",
  },
);

/** The runtime targets that can run here (with CI=true all of them: a missing runtime then fails). */
export function runtimeTargets(): Target[] {
  const targets = [workerd];
  if (runtimeAvailable("bun", "conformance")) targets.push(runtimeTarget("bun", "Bun.serve"));
  if (runtimeAvailable("deno", "conformance")) targets.push(runtimeTarget("deno", "Deno.serve"));
  return targets;
}

/** Stops every runtime a target started (call once the suite is done). */
export async function closeTargets(): Promise<void> {
  const servers = [...running.values()];
  running.clear();
  for (const server of servers) await (await server.catch(() => undefined))?.stop();
}
