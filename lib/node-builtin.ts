/**
 * Node's built-in modules for the code that needs one only on a server (digests, storage drivers,
 * files): taken from `process.getBuiltinModule` (Node 22.3+, Bun, Deno) when called, never
 * imported, so a browser bundle of the core meets no `node:` import. Elsewhere (a browser)
 * `nodeBuiltin` gives undefined; `loadNodeBuiltin` also covers a Node without that function.
 */

interface ProcessWithBuiltins {
  getBuiltinModule?: (id: string) => unknown;
}

/** The built-in `name` ("node:crypto"), or undefined where the runtime has none (a browser). */
export function nodeBuiltin<T>(name: string): T | undefined {
  const host = (globalThis as { process?: ProcessWithBuiltins }).process;
  return host?.getBuiltinModule?.(name) as T | undefined;
}

/**
 * The built-in `name`, on any Node: from `process.getBuiltinModule`, else by a dynamic import of
 * a specifier bundlers leave alone (a Node before 22.3). Rejects where there is no such module.
 */
export async function loadNodeBuiltin<T>(name: string): Promise<T> {
  const found = nodeBuiltin<T>(name);
  if (found !== undefined) return found;
  const specifier = name;
  return (await import(/* webpackIgnore: true */ /* @vite-ignore */ specifier)) as T;
}
