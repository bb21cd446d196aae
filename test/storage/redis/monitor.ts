/** The commands a test's store sends to Redis, seen with MONITOR. */
import { connect, type Socket } from "node:net";
import type { PetStorage } from "../../../lib/storage/port.ts";
import { REDIS_URL } from "../services.ts";

/** The commands a client (not a script) sends that name `ns`, while MONITOR watches the server. */
export async function watchCommands(ns: string) {
  const url = new URL(REDIS_URL);
  const socket: Socket = connect(Number(url.port || 6379), url.hostname);
  let text = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    text += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.write("MONITOR\r\n", () => resolve());
  });
  const seen = () =>
    text
      .split("\r\n")
      .filter((line) => line.includes(ns) && !line.includes("[0 lua]") && !/\[\d+ lua\]/.test(line))
      .map((line) => /\] "([A-Za-z]+)"/.exec(line)?.[1]?.toUpperCase() ?? line);
  return {
    /** The commands seen since the last call (after a round trip to let MONITOR catch up). */
    async since(storage: PetStorage): Promise<string[]> {
      await storage.ping();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const lines = seen();
      text = "";
      return lines;
    },
    close: () => socket.destroy(),
  };
}
