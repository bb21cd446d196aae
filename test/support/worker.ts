/**
 * Runs a Worker in workerd through Miniflare on 127.0.0.1, bundled by bench/bundle.ts's
 * bundleWorker as a Cloudflare Worker would be deployed (ES module, minified, Node built-ins left
 * to workerd's `nodejs_compat`).
 */
import { Miniflare } from "miniflare";

export { bundleWorker } from "../../bench/bundle.ts";

/** The compatibility settings a user's wrangler.toml needs (examples/cloudflare-worker has them). */
export const COMPATIBILITY = { compatibilityDate: "2025-09-01", compatibilityFlags: ["nodejs_compat"] };

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
