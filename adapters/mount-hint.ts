/**
 * The hint for a store mounted by Express under a path its basePath leaves out (`app.use("/shop",
 * handler)` with basePath "/v1"): such a request goes on to the next handler, and Express's HTML
 * 404 says nothing of why. One console warning per handler names the basePath to set.
 */
import { isUnderBasePath } from "../lib/adapter.ts";

const pathOf = (url: string) => url.split("?")[0] ?? url;

/**
 * The basePath under which the store would serve this request, `originalUrl` being the path Express
 * was asked for and `url` the rest below its mount point; undefined when it is no request for the store.
 *
 * @example suggestedBasePath("/shop/v1/pets", "/v1/pets", "/v1") // "/shop/v1"
 */
export function suggestedBasePath(originalUrl: string, url: string, basePath: string): string | undefined {
  const original = pathOf(originalUrl);
  const inner = pathOf(url);
  let mount: string;
  if (inner === "/") mount = original.replace(/\/$/, "");
  else if (original.endsWith(inner)) mount = original.slice(0, original.length - inner.length);
  else return undefined;
  if (mount === "") return undefined;
  if (isUnderBasePath(inner, basePath)) return `${mount}${basePath}`; // app.use("/shop") with basePath "/v1"
  if (mount.endsWith(basePath)) return mount; // app.use("/shop/v1") with basePath "/v1"
  return undefined;
}

/**
 * A function to call with each request outside the base path that Express rewrote (`originalUrl`
 * differs from `url`): the first that looks meant for the store gets the warning.
 */
export function createMountWarning(basePath: string): (originalUrl: string, url: string) => void {
  let warned = false; // once per handler: a misplaced mount is one mistake, however many requests
  return (originalUrl, url) => {
    if (warned) return;
    const suggested = suggestedBasePath(originalUrl, url, basePath);
    if (suggested === undefined) return;
    warned = true;
    console.warn(
      `petstore-lib: ${pathOf(originalUrl)} reached the pet store below an Express mount path, but the store's basePath is ` +
        `"${basePath}" and paths are absolute, so it went on to the next handler: set createPetStore({ basePath: "${suggested}" })`,
    );
  };
}
