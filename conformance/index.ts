/**
 * `petstore-lib/conformance`: the conformance cases every adapter of this package passes, as a
 * module any test runner can drive (no runner is imported; a failure is a rejected promise).
 *
 * @example
 *   import { conformanceCases } from "petstore-lib/conformance";
 *   const target = { basePath: "/v1", key: "k", reset: startFreshServer, get url() { return origin } };
 *   for (const c of conformanceCases()) test(c.name, () => c.run(target));
 */
export type { ConformanceCase } from "./cases.ts";
export { conformanceCases } from "./cases.ts";
export type { ConformanceTarget, FetchTarget, SocketTarget, TargetBase } from "./client.ts";
export type { StorageCase } from "./storage.ts";
export { storageCases } from "./storage.ts";
