import type { IncomingMessage } from "node:http";

/** "https" for a request that came over TLS, else "http": a trace's `url.scheme`. */
export const schemeOf = (req: IncomingMessage): string =>
  (req.socket as { encrypted?: boolean } | null)?.encrypted === true ? "https" : "http";
