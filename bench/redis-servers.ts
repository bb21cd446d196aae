/**
 * A single redis-server of a bench program's own (a spare port, a temporary folder, no
 * persistence), beside the Redis Cluster of test/support/redis-cluster.ts made the same way, so
 * that rows comparing them compare like with like. Killed by `stop()` or with the program.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { redisStorage } from "../lib/storage/redis/index.ts";

/** A TCP port nothing listens on right now. */
function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** A redis-server of this program's own, without persistence, as the cluster's nodes are here. */
export async function startSingleRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await findFreePort();
  const dir = mkdtempSync(join(tmpdir(), "petbench-redis-"));
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir];
  const child = spawn("redis-server", args, { stdio: "ignore" });
  const killNow = () => child.kill("SIGKILL");
  process.once("exit", killNow);
  const url = `redis://127.0.0.1:${port}`;
  const stopIt = async () => {
    process.off("exit", killNow);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (let tries = 0; ; tries++) {
    const storage = await redisStorage({ url }).catch(() => undefined);
    if (storage !== undefined) {
      await storage.close();
      return { url, stop: stopIt };
    }
    if (tries > 100) {
      await stopIt();
      throw new Error("the bench's redis-server did not answer");
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
