/**
 * Listening on a port, the one way the server, its metrics and the test kit do it: resolves once
 * the port accepts, with the address as a URL's origin (the real port when 0 was asked for), or
 * rejects with the system's error (EADDRINUSE, EACCES, …) and leaves no listener behind.
 */
import type { Server } from "node:net";

export interface Listening {
  /** The port the server listens on. */
  port: number;
  /** `http://host:port`, with an IPv6 host in brackets. */
  origin: string;
}

/** @example const { origin } = await listen(createServer(handler), 0, "127.0.0.1"); */
export function listen(server: Server, port: number, host: string): Promise<Listening> {
  return new Promise<Listening>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address();
      const real = typeof address === "object" && address !== null ? address.port : port;
      resolve({ port: real, origin: `http://${host.includes(":") ? `[${host}]` : host}:${real}` });
    });
  });
}

/** Where the address comes from, for the hint: e.g. `{ port: "PORT or --port", host: "HOST or --host" }`. */
export interface ListenSettings {
  port: string;
  host: string;
}

/** Why listening failed, in words an operator can act on, naming the settings to change. */
export function listenProblem(error: unknown, host: string, port: number, settings: ListenSettings): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === "EADDRINUSE") {
    return `port ${port} on ${host} is already in use (EADDRINUSE): choose another with ${settings.port} (0 picks a free one)`;
  }
  if (code === "EACCES") {
    return `no permission to listen on ${host}:${port} (EACCES): ports below 1024 need privileges; choose another with ${settings.port}`;
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return `cannot listen on ${host}:${port}: ${host} is not an address of this machine (${code}); set ${settings.host}`;
  }
  return `cannot listen on ${host}:${port}: ${code ?? (error instanceof Error ? error.message : String(error))}`;
}
