/**
 * `startTestServer()`: the test kit as a real server on 127.0.0.1 and a free port, for code that
 * calls the Pet Store over HTTP. It never keeps a process alive by itself: the server and its
 * connections are unref'd, so a test that forgets `close()` still ends.
 */
import { createServer } from "node:http";
import { answerClientError } from "../adapters/node-http.ts";
import type { TestKit, TestKitOptions } from "./kit.ts";
import { openKit } from "./kit.ts";
import { createKitListener } from "./listener.ts";

export interface TestServer extends TestKit {
  /** e.g. "http://127.0.0.1:54321/v1": the base URL, base path included. */
  readonly url: string;
}

/**
 * A real Pet Store server on 127.0.0.1 and a free port, on memory storage unless told otherwise.
 *
 * @example
 *   const server = await startTestServer({ pets: [{ name: "Rex", categoryId: 1 }] });
 *   const res = await fetch(`${server.url}/pets`, { headers: { authorization: `Bearer ${server.key}` } });
 *   await server.close();
 */
export async function startTestServer(options: TestKitOptions = {}): Promise<TestServer> {
  const kit = await openKit(options);
  const { store } = kit;
  const server = createServer(createKitListener(kit));
  server.on("connection", (socket) => socket.unref());
  server.on("clientError", answerClientError); // what the parser refuses gets the Error body too
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port));
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  const origin = `http://127.0.0.1:${port}`;
  server.unref();
  let closing: Promise<void> | undefined;
  return {
    url: `${origin}${store.basePath}`,
    key: kit.key,
    get store() {
      return kit.store;
    },
    reset: kit.reset,
    failNext: kit.failNext,
    delay: kit.delay,
    requests: kit.requests,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await stopped;
        await kit.store.close();
      })();
      return closing;
    },
  };
}
