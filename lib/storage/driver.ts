/**
 * Loads the optional driver packages (@keyv/sqlite, @keyv/redis, @keyv/postgres) only when a
 * backend asks for them, so that the memory path, and importing the library, never needs them.
 * A missing package is one clear StorageConfigError naming what to install.
 */
import { loadNodeBuiltin, nodeBuiltin } from "../node-builtin.ts";
import { reason, StorageConfigError } from "./config-error.ts";

type NodeModule = typeof import("node:module");
/** node:module as `loadDriver` loaded it: for `requireFromDriver` on a Node without process.getBuiltinModule. */
let nodeModule: NodeModule | undefined;

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND";
}

function missing(pkg: string, backend: string, error: unknown): StorageConfigError {
  // "Cannot find package '@keyv/redis'…" is the package itself; anything else is one of its parts.
  const line = reason(error);
  const what = line.includes(`'${pkg}'`) ? "is not installed" : `could not be loaded (${line})`;
  return new StorageConfigError(
    `the ${backend} storage needs the optional package ${pkg}, which ${what}: run npm install ${pkg}`,
    { cause: error },
  );
}

/** Imports an optional driver package. @example const { default: KeyvRedis } = await loadDriver<typeof import("@keyv/redis")>("@keyv/redis", "redis") */
export async function loadDriver<T>(pkg: string, backend: string): Promise<T> {
  nodeModule ??= await loadNodeBuiltin<NodeModule>("node:module");
  try {
    return (await import(pkg)) as T;
  } catch (error) {
    if (isModuleNotFound(error)) throw missing(pkg, backend, error);
    throw error;
  }
}

/**
 * Requires a package that a driver package depends on (e.g. `pg`, which @keyv/postgres brings),
 * resolved from that driver's own folder so it is found whatever the package manager's layout.
 */
export function requireFromDriver<T>(pkg: string, dependency: string, backend: string): T {
  nodeModule ??= nodeBuiltin<NodeModule>("node:module");
  if (nodeModule === undefined) {
    throw new StorageConfigError(`the ${backend} storage needs a server runtime (Node.js, Bun or Deno) for ${pkg}`);
  }
  const { createRequire } = nodeModule;
  try {
    const driverEntry = createRequire(import.meta.url).resolve(pkg);
    return createRequire(driverEntry)(dependency) as T;
  } catch (error) {
    if (isModuleNotFound(error)) throw missing(pkg, backend, error);
    throw error;
  }
}
