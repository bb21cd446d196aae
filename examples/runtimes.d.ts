/**
 * The little of Bun's and Deno's own APIs the examples use, so that `npm run typecheck` checks
 * them under Node's types. In a Bun or Deno project, the runtime's own types (bun-types, deno)
 * declare these.
 */
declare global {
  const Bun: {
    serve(options: { port: number; hostname?: string; fetch: (request: Request) => Response | Promise<Response> }): {
      url: URL;
      port: number;
      stop(closeActiveConnections?: boolean): Promise<void>;
    };
  };
  const Deno: {
    serve(
      options: { port: number; hostname?: string; onListen?: (address: { port: number }) => void },
      handler: (request: Request) => Response | Promise<Response>,
    ): { shutdown(): Promise<void>; finished: Promise<void> };
    env: { get(name: string): string | undefined };
    addSignalListener(signal: "SIGTERM" | "SIGINT", handler: () => void): void;
    exit(code?: number): never;
  };
}

export {};
