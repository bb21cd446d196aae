/**
 * Bundles a Worker entry with esbuild as a Cloudflare Worker would be deployed (ES module,
 * minified, Node built-ins left to workerd's `nodejs_compat`), and runs it in workerd through
 * Miniflare on 127.0.0.1.
 */
import { builtinModules } from "node:module";
import { build } from "esbuild";
import { Miniflare } from "miniflare";

/** The compatibility settings a user's wrangler.toml needs (examples/cloudflare-worker has them). */
export const COMPATIBILITY = { compatibilityDate: "2025-09-01", compatibilityFlags: ["nodejs_compat"] };

const NODE_BUILTINS = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

/** The entry bundled into one minified ES module: its text. */
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

export interface WorkerSettings {
  compatibilityDate: string;
  compatibilityFlags: string[];
  /** Environment bindings (vars and secrets) as `env` gives them to the Worker. */
  bindings?: Record<string, string>;
}

/** workerd serving the script on 127.0.0.1 (a free port); `url` ends with "/". */
export async function startWorker(
  script: string,
  settings: WorkerSettings = COMPATIBILITY,
): Promise<{ url: URL; mf: Miniflare }> {
  const mf = new Miniflare({ modules: true, script, ...settings, host: "127.0.0.1", port: 0 });
  const url = await mf.ready;
  return { url, mf };
}
