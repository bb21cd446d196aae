/**
 * One interface, proven: the suite written only against `Operations` (operations-suite.ts) passes
 * on `createPetStore()` in process, on `createPetStoreClient()` over the standalone server (a
 * socket), and on the client whose `fetch` is `createFetchHandler(store)` (no socket).
 */
import { suite } from "uvu";
import { createFetchHandler } from "../../adapters/fetch.ts";
import { createPetStoreClient } from "../../client/index.ts";
import type { Operations } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";
import { startServer } from "../../server/index.ts";
import { createLogger } from "../../server/logger.ts";
import { OPERATIONS_CASES, SUITE_RULES } from "./operations-suite.ts";

const KEY = "operations-suite-key";

interface Target {
  name: string;
  /** A fresh, empty store as Operations, and how to close it. */
  open(): Promise<{ ops: Operations; close(): Promise<void> }>;
}

const fast = { baseDelayMs: 1 };

const TARGETS: Target[] = [
  {
    name: "createPetStore() in process",
    async open() {
      const store = createPetStore({ auth: [KEY], rules: SUITE_RULES });
      return { ops: store, close: () => store.close() };
    },
  },
  {
    name: "createPetStoreClient() over the standalone server",
    async open() {
      const config = { port: 0, host: "127.0.0.1", storage: "memory", basePath: "/v1", logLevel: "silent" as const };
      const server = await startServer(
        { ...config, apiKeys: [KEY] },
        { logger: createLogger("silent"), rules: SUITE_RULES },
      );
      return {
        ops: createPetStoreClient({ baseUrl: server.url, key: KEY, retry: fast }),
        close: () => server.close(),
      };
    },
  },
  {
    name: "createPetStoreClient() over createFetchHandler (its fetch option)",
    async open() {
      const store = createPetStore({ auth: [KEY], rules: SUITE_RULES });
      const fetch = createFetchHandler(store);
      return {
        ops: createPetStoreClient({ baseUrl: "http://in-process.test/v1", key: KEY, fetch, retry: fast }),
        close: () => store.close(),
      };
    },
  },
];

for (const target of TARGETS) {
  const s = suite(`Operations suite: ${target.name}`);
  for (const c of OPERATIONS_CASES) {
    s(`${target.name}: ${c.name}`, async () => {
      const { ops, close } = await target.open();
      try {
        await c.run(ops);
      } finally {
        await close();
      }
    });
  }
  s.run();
}
