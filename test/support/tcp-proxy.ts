/**
 * A TCP proxy of the tests' own in front of a real server, to stage its outages without touching
 * the shared server: `freeze()` holds the bytes both ways (as a stopped process would: they flow
 * again on `thaw()`), `cut()` drops every connection and closes the port (as a killed server),
 * `start()` listens again on the same port.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";

export interface TcpProxy {
  port: number;
  start(): Promise<void>;
  freeze(): void;
  thaw(): void;
  cut(): Promise<void>;
}

/** A proxy on `port` (127.0.0.1) to `host:targetPort`, not yet listening. */
export function tcpProxy(port: number, host: string, targetPort: number): TcpProxy {
  const links = new Set<{ from: Socket; to: Socket; held: Buffer[] }>();
  let server: Server | undefined;
  let frozen = false;
  /** Forwards what `from` sends to `to`, holding it while the proxy is frozen. */
  const forward = (from: Socket, to: Socket) => {
    const link = { from, to, held: [] as Buffer[] };
    links.add(link);
    from.on("data", (chunk: Buffer) => {
      if (frozen) link.held.push(chunk);
      else to.write(chunk);
    });
    from.on("error", () => from.destroy());
    from.on("close", () => {
      links.delete(link);
      to.destroy();
    });
  };
  return {
    port,
    async start() {
      server = createServer((client) => {
        const upstream = tcpConnect(targetPort, host);
        forward(client, upstream);
        forward(upstream, client);
      });
      await new Promise<void>((resolve) => server?.listen(port, "127.0.0.1", resolve));
    },
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      for (const link of links) for (const chunk of link.held.splice(0)) link.to.write(chunk);
    },
    async cut() {
      const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      for (const link of links) link.from.destroy();
      await closed;
      server = undefined;
    },
  };
}
