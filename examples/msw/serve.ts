/**
 * Serves the browser example on 127.0.0.1:PORT (default 3000; 0 picks a free port): index.html,
 * browser.ts bundled by esbuild (as any bundler would, for the browser) and mockServiceWorker.js.
 *
 *   npx tsx examples/msw/serve.ts      then open the URL it prints
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { build } from "esbuild";

const here = (name: string) => new URL(name, import.meta.url);
const bundled = await build({
  entryPoints: [here("browser.ts").pathname],
  bundle: true,
  platform: "browser",
  format: "esm",
  write: false,
  logLevel: "warning",
});
const files: Record<string, [string, string]> = {
  "/": ["text/html; charset=utf-8", readFileSync(here("index.html"), "utf8")],
  "/browser.js": ["text/javascript; charset=utf-8", bundled.outputFiles[0]?.text ?? ""],
  "/mockServiceWorker.js": ["text/javascript; charset=utf-8", readFileSync(here("mockServiceWorker.js"), "utf8")],
};

const server = createServer((req, res) => {
  const file = files[new URL(req.url ?? "/", "http://localhost").pathname];
  if (file === undefined) res.writeHead(404).end();
  else res.writeHead(200, { "content-type": file[0], "cache-control": "no-store" }).end(file[1]);
});
server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  const address = server.address();
  console.log(`serving on http://127.0.0.1:${typeof address === "object" && address ? address.port : ""}/`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
process.on("SIGINT", () => server.close(() => process.exit(0)));
