/**
 * A Redis Cluster of our own for the tests and the bench: 3 primaries and 3 replicas from
 * redis-server on spare ports and a temporary folder, each node's writes on disk before it answers
 * (appendfsync always). Every process ends with `stop()`, with this process, or (a watchdog per
 * node) when this process is killed: nothing is left running.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface OwnCluster {
  /** The data ports, primaries first as created (which stays so only until a failover). */
  ports: number[];
  /** The root nodes, as `redisStorage({ cluster })` takes them. */
  rootNodes: { url: string }[];
  /** `redis+cluster://127.0.0.1:p1,…` with `query` (e.g. "namespace=x"), as PETSTORE_STORAGE takes it. */
  spec(query?: string): string;
  /** The port of the live primary that owns `key`'s slot. */
  primaryOf(key: string): Promise<number>;
  /** The ports of the online replicas of the primary on `port`. */
  replicasOf(port: number): Promise<number[]>;
  /** Sends a command to one node; its reply as text (arrays joined by newlines). */
  command(port: number, ...args: string[]): Promise<string>;
  /** SIGKILLs the node on `port` (no chance to save or tell anyone). */
  kill(port: number): Promise<void>;
  /** Sends a signal to the node on `port`, e.g. SIGSTOP to freeze it and SIGCONT to thaw it. */
  signal(port: number, signal: NodeJS.Signals): void;
  /** Starts the node on `port` again from its folder (it rejoins, as a replica if it was failed over). */
  restart(port: number): Promise<void>;
  /** Resolves once every live node says the cluster is ok and each primary has an online replica. */
  healthy(ms?: number): Promise<void>;
  /** Kills every node and removes the folder. */
  stop(): Promise<void>;
}

/** True when redis-server and redis-cli can be run. */
export function redisClusterInstallable(): boolean {
  return ["redis-server", "redis-cli"].every(
    (binary) => spawnSync(binary, ["--version"], { stdio: "ignore" }).status === 0,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** True when nothing listens on 127.0.0.1:port. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * `count` ports, each free with its cluster bus port (+10000) free too, below Linux's ephemeral
 * range (32768 and up) so that no outgoing connection takes one meanwhile.
 */
async function findSparePorts(count: number): Promise<number[]> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 12000 + Math.floor(Math.random() * 9000);
    const ports = Array.from({ length: count }, (_, i) => base + i);
    const checks = await Promise.all(ports.flatMap((port) => [isFree(port), isFree(port + 10000)]));
    if (checks.every(Boolean)) return ports;
  }
  throw new Error("no spare ports for a Redis Cluster");
}

/** Runs a program to its end (at most `ms`); its stdout, or a rejection with its output. */
function runProgram(program: string, args: string[], ms = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${program} ${args.join(" ")} ended with ${code}: ${out.slice(0, 2000)}`));
    });
  });
}

interface Node {
  process: ChildProcess;
  /** Kills the node if this process goes first, however it goes (it reads our end of a pipe). */
  watchdog: ChildProcess;
}

/** One line of CLUSTER NODES: `<id> <ip:port@bus> <flags> <primary id|-> … <slots>`. */
interface NodeLine {
  id: string;
  port: number;
  flags: string[];
  primary: string;
  slots: [number, number][];
}

function parseNodes(text: string): NodeLine[] {
  return text
    .trim()
    .split("\n")
    .map((line) => {
      const [id = "", address = "", flags = "", primary = "", , , , , ...slots] = line.trim().split(" ");
      return {
        id,
        port: Number(/:(\d+)@/.exec(address)?.[1]),
        flags: flags.split(","),
        primary,
        slots: slots
          .filter((s) => !s.startsWith("["))
          .map((s) => s.split("-").map(Number))
          .map(([from = 0, to]) => [from, to ?? from] as [number, number]),
      };
    });
}

/**
 * Starts 6 nodes and makes them a cluster of 3 primaries with a replica each.
 * `nodeTimeoutMs`: how long a node may be silent before the others hold it failed (Redis: 15 s);
 * `persistence: false`: no append-only file (as a bench's single Redis without one).
 */
export async function startRedisCluster(
  options: { nodeTimeoutMs?: number; persistence?: boolean } = {},
): Promise<OwnCluster> {
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 5000;
  const persistence = options.persistence === false ? ["no"] : ["yes", "--appendfsync", "always"];
  const dir = mkdtempSync(join(tmpdir(), "petstore-cluster-"));
  const ports = await findSparePorts(6);
  const nodes = new Map<number, Node>();
  const { createClient } = await import("@keyv/redis");
  const clients = new Map<number, ReturnType<typeof createClient>>();
  /**
   * One command, on a connection per node that keeps no process alive between commands (a timer
   * does while one waits).
   */
  const command = async (port: number, ...args: string[]): Promise<string> => {
    const keepAlive = setTimeout(() => {}, 60_000);
    try {
      let client = clients.get(port);
      if (client === undefined || !client.isOpen) {
        client = createClient({ socket: { host: "127.0.0.1", port, reconnectStrategy: false, connectTimeout: 2000 } });
        client.on("error", () => {});
        clients.set(port, client);
        await client.connect();
        client.unref();
      }
      const reply = await client.sendCommand(args);
      return Array.isArray(reply) ? reply.join("\n") : String(reply);
    } finally {
      clearTimeout(keepAlive);
    }
  };
  const forget = (port: number) => {
    const client = clients.get(port);
    clients.delete(port);
    if (client?.isOpen) client.destroy();
  };

  const startNode = async (port: number) => {
    const home = join(dir, String(port));
    mkdirSync(home, { recursive: true });
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", home, "--logfile", join(home, "log")];
    args.push("--cluster-enabled", "yes", "--cluster-config-file", join(home, "nodes.conf"));
    args.push("--cluster-node-timeout", String(nodeTimeoutMs));
    args.push("--save", "", "--appendonly", ...persistence);
    // A returning replica syncs at once (Redis waits 5 s by default for more replicas to sync together).
    args.push("--repl-diskless-sync-delay", "0");
    const child = spawn("redis-server", args, { stdio: "ignore" });
    child.unref();
    const watchdog = spawn("sh", ["-c", `read _; kill -9 ${child.pid} 2>/dev/null`], {
      stdio: ["pipe", "ignore", "ignore"],
    });
    watchdog.unref();
    (watchdog.stdin as unknown as { unref(): void }).unref();
    nodes.set(port, { process: child, watchdog });
    for (let i = 0; ; i++) {
      if ((await command(port, "PING").catch(() => "")) === "PONG") return;
      forget(port);
      if (i > 100 || child.exitCode !== null) throw new Error(`redis-server on port ${port} did not start`);
      await sleep(50);
    }
  };

  const killNode = async (port: number) => {
    const node = nodes.get(port);
    nodes.delete(port);
    forget(port);
    if (node === undefined) return;
    const { process: child, watchdog } = node;
    if (child.exitCode === null && child.signalCode === null) {
      // The child is unref'd: a timer keeps this process up until its exit is heard.
      const keepAlive = setTimeout(() => {}, 10_000);
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
      clearTimeout(keepAlive);
    }
    watchdog.kill("SIGKILL");
  };

  const killAllNow = () => {
    for (const port of clients.keys()) forget(port);
    for (const { process: child, watchdog } of nodes.values()) {
      child.kill("SIGKILL");
      watchdog.kill("SIGKILL");
    }
    nodes.clear();
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", killAllNow);

  const listLiveNodes = async (): Promise<NodeLine[]> => {
    for (const port of nodes.keys()) {
      const text = await command(port, "CLUSTER", "NODES").catch(() => undefined);
      if (text !== undefined) return parseNodes(text).filter((n) => !n.flags.includes("fail") && nodes.has(n.port));
    }
    throw new Error("no node of the cluster answers");
  };

  const cluster: OwnCluster = {
    ports,
    rootNodes: ports.map((port) => ({ url: `redis://127.0.0.1:${port}` })),
    spec: (query) => `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(",")}${query ? `?${query}` : ""}`,
    command,
    async primaryOf(key) {
      const slot = Number(await command(ports.find((p) => nodes.has(p)) ?? 0, "CLUSTER", "KEYSLOT", key));
      const owner = (await listLiveNodes()).find(
        (n) => n.flags.includes("master") && n.slots.some(([from, to]) => from <= slot && slot <= to),
      );
      if (owner === undefined) throw new Error(`no live primary owns slot ${slot}`);
      return owner.port;
    },
    async replicasOf(port) {
      // The primary's own view (gossip may not have told every node yet).
      const info = await command(port, "INFO", "replication");
      return [...info.matchAll(/^slave\d+:ip=[^,]*,port=(\d+),state=online/gm)].map((m) => Number(m[1]));
    },
    kill: killNode,
    signal: (port, signal) => nodes.get(port)?.process.kill(signal),
    restart: startNode,
    async healthy(ms = 30_000) {
      const deadline = Date.now() + ms;
      let last = "";
      while (Date.now() < deadline) {
        try {
          const infos = await Promise.all([...nodes.keys()].map((port) => command(port, "CLUSTER", "INFO")));
          const all = await listLiveNodes();
          const primaries = all.filter((n) => n.flags.includes("master") && n.slots.length > 0);
          const replicated = await Promise.all(
            primaries.map(async (p) => /state=online/.test(await command(p.port, "INFO", "replication"))),
          );
          last = `${infos.filter((i) => i.includes("cluster_state:ok")).length}/${infos.length} ok, ${replicated.filter(Boolean).length}/${primaries.length} primaries replicated`;
          if (infos.every((i) => i.includes("cluster_state:ok")) && primaries.length === 3 && replicated.every(Boolean))
            return;
        } catch (error) {
          last = String(error);
        }
        await sleep(100);
      }
      throw new Error(`the Redis Cluster is not healthy within ${ms} ms (${last})`);
    },
    async stop() {
      process.off("exit", killAllNow);
      await Promise.all([...nodes.keys()].map(killNode));
      for (const port of clients.keys()) forget(port);
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    await Promise.all(ports.map(startNode));
    const addresses = ports.map((port) => `127.0.0.1:${port}`);
    await runProgram("redis-cli", ["--cluster", "create", ...addresses, "--cluster-replicas", "1", "--cluster-yes"]);
    await cluster.healthy();
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}
