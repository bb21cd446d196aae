/**
 * A TCP proxy in front of the test Redis that can hold Redis's replies back: what a store sends
 * before it hears anything is then exactly what it sends in one round trip.
 */
import { connect, createServer, type Socket } from "node:net";
import { REDIS_URL } from "../services.ts";

export interface HoldProxy {
  /** `redis://` URL of the proxy. */
  url: string;
  /** Holds replies from now on, and forgets what was sent so far. */
  hold(): void;
  /** The command names sent since `hold()` (RESP arrays' first bulk strings), once `until` is among them or `ms` passed. */
  sent(until: string, ms?: number): Promise<string[]>;
  /** Lets the held replies through, and the next ones. */
  release(): void;
  close(): Promise<void>;
}

/** The command names in RESP text (each array's first bulk string), but PING. */
function commandNames(text: string): string[] {
  const names = [...text.matchAll(/\*\d+\r\n\$\d+\r\n([A-Za-z]+)\r\n/g)].map((m) => (m[1] as string).toUpperCase());
  return names.filter((name) => name !== "PING"); // the connection's own keep-alive
}

export async function startHoldProxy(): Promise<HoldProxy> {
  const target = new URL(REDIS_URL);
  let holding = false;
  let sentText = "";
  const held: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on("data", (chunk: Buffer) => {
      sentText += chunk.toString("latin1");
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (holding) held.push(() => client.write(chunk));
      else client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    hold() {
      holding = true;
      sentText = "";
    },
    async sent(until, ms = 2000) {
      const deadline = Date.now() + ms;
      while (!commandNames(sentText).includes(until) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return commandNames(sentText);
    },
    release() {
      holding = false;
      for (const write of held.splice(0)) write();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
