/**
 * A small static server on 127.0.0.1 for the browser suites: each path serves the text it is given
 * (an HTML page, a bundle, a service worker script), anything else is 404. `port` 0 picks one.
 */
import { createServer, type Server } from "node:http";

export interface StaticFile {
  type: string;
  body: string;
}

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
};

/** A file of `body`, its type from `name`'s extension (.html, .js). */
export function fileOf(name: string, body: string): StaticFile {
  return { type: TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream", body };
}

/** Serves `files` (path → file) until `close()`; `origin` is "http://127.0.0.1:<port>". */
export async function serveFiles(
  files: Record<string, StaticFile>,
  port = 0,
): Promise<{ origin: string; port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const file = files[new URL(req.url ?? "/", "http://x").pathname];
    if (file === undefined) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": file.type, "cache-control": "no-store" }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address();
  const bound = typeof address === "object" && address !== null ? address.port : 0;
  return {
    origin: `http://127.0.0.1:${bound}`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
