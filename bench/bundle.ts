/**
 * K1: the size of the pet store as a Cloudflare Worker ships it: examples/cloudflare-worker
 * (core + fetch adapter + memory storage) bundled and minified by esbuild as wrangler would, Node
 * built-ins left to workerd's `nodejs_compat`. Also used by the tests that run Workers.
 * K2 (`bundle.ts client`): `petstore-lib/client` alone, bundled and minified the same way.
 * Run by bench/run.ts; by hand: `npx tsx bench/bundle.ts [client]`.
 */
import { builtinModules } from "node:module";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { finish } from "./child.ts";
import { row } from "./report.ts";

const NODE_BUILTINS = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

/** The entry bundled into one minified ES module, as its text. */
export async function bundleWorker(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "import"],
    external: NODE_BUILTINS,
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0]?.text ?? "";
}

/** The limit the issue sets for the Worker bundle, in KB (1,000 bytes). */
export const WORKER_BUNDLE_LIMIT_KB = 150;

/** The limit of the client's bundle, in KB; bench/README.md says why. */
export const CLIENT_BUNDLE_LIMIT_KB = 15;

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "client") {
  const entry = fileURLToPath(new URL("../client/index.ts", import.meta.url));
  const script = await bundleWorker(entry);
  const bytes = Buffer.byteLength(script);
  finish([
    row({
      id: "K2",
      scenario: "petstore-lib/client bundle, minified (esbuild)",
      ours: bytes / 1000,
      baseline: null,
      unit: "KB",
      target: { on: "ours", op: "<=", value: CLIENT_BUNDLE_LIMIT_KB },
      note: `${bytes.toLocaleString("en-US")} bytes, ${(gzipSync(script).length / 1000).toFixed(1)} KB gzipped (client/index.ts)`,
    }),
  ]);
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const entry = fileURLToPath(new URL("../examples/cloudflare-worker/worker.ts", import.meta.url));
  const script = await bundleWorker(entry);
  const bytes = Buffer.byteLength(script);
  finish([
    row({
      id: "K1",
      scenario: "Cloudflare Worker bundle: core + fetch adapter + memory storage, minified (esbuild)",
      ours: bytes / 1000,
      baseline: null,
      unit: "KB",
      target: { on: "ours", op: "<=", value: WORKER_BUNDLE_LIMIT_KB },
      note: `${bytes.toLocaleString("en-US")} bytes, ${(gzipSync(script).length / 1000).toFixed(1)} KB gzipped (examples/cloudflare-worker/worker.ts)`,
    }),
  ]);
}
