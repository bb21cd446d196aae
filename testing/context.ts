/**
 * Spans keep their parents across awaits only under a context manager, which an application's
 * SDK set-up registers (NodeSDK, `provider.register()`). A test that hands the kit a
 * `tracerProvider` may have none: the kit then registers one over Node's AsyncLocalStorage, for the
 * process (as an SDK would), and leaves one registered before it alone.
 */
import type { Context, ContextManager } from "@opentelemetry/api";
import { otelApi } from "../lib/internal.ts";
import { nodeBuiltin } from "../lib/node-builtin.ts";

type AsyncHooks = typeof import("node:async_hooks");

/** Registers a context manager unless one is (a no-op without `@opentelemetry/api` or outside Node). */
export function ensureContextManager(): void {
  const api = otelApi();
  const hooks = nodeBuiltin<AsyncHooks>("node:async_hooks");
  if (api === undefined || hooks === undefined) return;
  const storage = new hooks.AsyncLocalStorage<Context>();
  const manager: ContextManager = {
    active: () => storage.getStore() ?? api.ROOT_CONTEXT,
    with: (context, fn, thisArg, ...args) => storage.run(context, () => fn.apply(thisArg, args)),
    bind<T>(context: Context, target: T): T {
      if (typeof target !== "function") return target;
      const run = target as unknown as (...args: unknown[]) => unknown;
      return function bound(this: unknown, ...args: unknown[]) {
        return storage.run(context, () => run.apply(this, args));
      } as unknown as T;
    },
    enable: () => manager,
    disable() {
      storage.disable();
      return manager;
    },
  };
  // Refused (false) when one is registered: that one stays.
  api.context.setGlobalContextManager(manager);
}
