/**
 * `createTestStore()`: the test kit in process, without a socket: `request()` answers as the test
 * server would, like hapi's `server.inject`, and `fetch()` is a standard fetch bound to the store,
 * for code under test that takes one. Both go through the kit: delay, request ids, faults, journal.
 */
import { createFetchHandler } from "../adapters/fetch.ts";
import type { AdapterStore } from "../lib/adapter.ts";
import type { PetStoreRequest, PetStoreResponse } from "../lib/index.ts";
import { utf8Length } from "../lib/internal.ts";
import type { TestKit, TestKitOptions } from "./kit.ts";
import { openKit } from "./kit.ts";

/** What `TestStore.request` resolves: like hapi's `server.inject`. */
export interface TestResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The body text ("" for HEAD). */
  body: string;
  /** The body parsed, when it is JSON; else undefined. */
  json: unknown;
}

export interface TestRequestOptions {
  /** An object is sent as JSON with `Content-Type: application/json`; a string or bytes as they are. */
  body?: unknown;
  /** Extra headers; `authorization` replaces the test key (`undefined` sends none). */
  headers?: Record<string, string | string[] | undefined>;
  /**
   * An earlier answer to revalidate: its `ETag` is sent as `If-None-Match`, so that the store
   * answers `304` (no body) while it is unchanged.
   * @example const again = await t.request("GET", "/v1/pets", { revalidate: first }); // again.status === 304
   */
  revalidate?: TestResponse;
}

/**
 * Also an `AdapterStore`: `respond` is the store's answer with the kit's delay and request ids, so
 * an adapter serves the test store as the test server does (`petStoreHandlers(testStore)` for msw).
 */
export interface TestStore extends TestKit, AdapterStore {
  readonly basePath: string;
  /** The store's body limit in bytes, for an adapter. */
  readonly maxBodyBytes: number;
  /** The store's answer to a request, with the kit's delay and request ids, for an adapter. */
  respond(request: PetStoreRequest): Promise<PetStoreResponse>;
  /** Sends one request through `store.handle()`, with the test key: `path` is absolute (`/v1/pets?limit=5`). */
  request(method: string, path: string, options?: TestRequestOptions): Promise<TestResponse>;
  /**
   * A standard `fetch` answered by the store in process (no socket; any origin, or a path alone:
   * `"/v1/pets"`). Send the key yourself. A connection `failNext` loses rejects as fetch does, with
   * a `TypeError`.
   * @example createPetStoreClient({ baseUrl: "http://petstore.test/v1", key: t.key, fetch: t.fetch })
   */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
}

/** The origin a path given to `fetch()` alone is read against (nothing is sent there). */
const IN_PROCESS_ORIGIN = "http://petstore.test";

/** The body and content type `request()` sends. */
function bodyOf(body: unknown): { body: string | Uint8Array | undefined; json: boolean } {
  if (body === undefined || body === null) return { body: undefined, json: false };
  if (typeof body === "string" || body instanceof Uint8Array) return { body, json: false };
  return { body: JSON.stringify(body), json: true };
}

/**
 * The same as `startTestServer`, in process (no socket): `request()` is answered by the store, with
 * the kit's delay and request ids, as the test server's requests are.
 *
 * @example
 *   const t = await createTestStore({ pets: 2 });
 *   const { status, json } = await t.request("GET", "/v1/pets?limit=1");
 */
export async function createTestStore(options: TestKitOptions = {}): Promise<TestStore> {
  const kit = await openKit(options);
  const { store } = kit;
  const handler = createFetchHandler({
    basePath: store.basePath,
    maxBodyBytes: store.maxBodyBytes,
    respond: kit.respond,
  });
  let closing: Promise<void> | undefined;
  return {
    key: kit.key,
    get store() {
      return kit.store;
    },
    basePath: store.basePath,
    maxBodyBytes: store.maxBodyBytes,
    respond: kit.respond,
    reset: kit.reset,
    failNext: kit.failNext,
    delay: kit.delay,
    requests: kit.requests,
    async fetch(input, init) {
      if (input instanceof Request && init === undefined) return handler(input);
      const url = typeof input === "string" && input.startsWith("/") ? new URL(input, IN_PROCESS_ORIGIN) : input;
      return handler(new Request(url, init));
    },
    close() {
      closing ??= kit.store.close();
      return closing;
    },
    async request(method, path, requestOptions = {}) {
      if (typeof method !== "string" || method === "") throw new TypeError("request: method must be a string");
      if (typeof path !== "string" || !path.startsWith("/")) {
        throw new TypeError(`request: path must be absolute, e.g. "/v1/pets" (got ${JSON.stringify(path)})`);
      }
      const { body, json } = bodyOf(requestOptions.body);
      const headers: Record<string, string | string[] | undefined> = { authorization: `Bearer ${kit.key}` };
      const { revalidate } = requestOptions;
      if (revalidate !== undefined) {
        const etag = revalidate?.headers?.etag;
        if (typeof etag !== "string") {
          throw new TypeError("request: revalidate takes an earlier answer that carries an ETag (a pet or a page)");
        }
        headers["if-none-match"] = etag;
      }
      if (json) headers["content-type"] = "application/json";
      for (const [name, value] of Object.entries(requestOptions.headers ?? {})) {
        const lower = name.toLowerCase();
        if (value === undefined) delete headers[lower];
        else headers[lower] = value;
      }
      if (body !== undefined && headers["content-length"] === undefined) {
        headers["content-length"] = String(typeof body === "string" ? utf8Length(body) : body.byteLength);
      }
      const q = path.indexOf("?");
      const response = await kit.respond({
        method: method.toUpperCase(),
        path: q === -1 ? path : path.slice(0, q),
        query: q === -1 ? "" : path.slice(q + 1),
        headers,
        body,
      });
      let parsed: unknown;
      if (response.body !== "" && response.headers["content-type"]?.startsWith("application/json")) {
        try {
          parsed = JSON.parse(response.body);
        } catch {}
      }
      return { status: response.status, headers: { ...response.headers }, body: response.body, json: parsed };
    },
  };
}
