/**
 * `petstore-lib/msw`: the Pet Store as Mock Service Worker handlers, so a front end's
 * `fetch("https://api.example/v1/pets")` is answered by a real, stateful store: in the browser
 * (the service worker), in Node tests (`msw/node`) and in Storybook. msw (2 or 3) is an optional
 * peer dependency, imported here only. Translation only: each request goes to the fetch adapter.
 *
 * @example setupWorker(...petStoreHandlers(await createTestStore({ pets: 3 }), { baseUrl: "https://api.example/v1" }))
 */
import { type HttpHandler, http } from "msw";
import type { AdapterStore } from "../lib/adapter.ts";
import { checkOptionNames } from "../lib/adapter.ts";
import { createFetchHandler } from "./fetch.ts";

export interface PetStoreHandlersOptions {
  /**
   * Where the front end calls the API: an absolute URL ("https://api.example/v1") or a path on the
   * page's own origin ("/v1"; in Node, where there is no page, any origin). Its path is the
   * store's base path. Default: the store's base path.
   */
  baseUrl?: string;
}

/** The base URL checked: no trailing "/", its path the store's base path. */
function checkBaseUrl(baseUrl: unknown, basePath: string): string {
  if (typeof baseUrl !== "string" || baseUrl === "") {
    throw new TypeError(`petStoreHandlers: baseUrl must be a URL or a path, e.g. "https://api.example${basePath}"`);
  }
  const absolute = /^[a-z][a-z0-9+.-]*:\/\//i.test(baseUrl);
  let path: string;
  try {
    path = new URL(baseUrl, "http://relative.invalid").pathname;
  } catch {
    throw new TypeError(`petStoreHandlers: baseUrl ${JSON.stringify(baseUrl)} is not a URL`);
  }
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  if (trimmed !== basePath || (!absolute && !baseUrl.startsWith("/")) || /[?#]/.test(baseUrl)) {
    throw new TypeError(
      `petStoreHandlers: the store answers under ${basePath}: give a baseUrl whose path is ${basePath} ` +
        `(e.g. "https://api.example${basePath}"), or a store with that base path (got ${JSON.stringify(baseUrl)})`,
    );
  }
  return baseUrl.replace(/\/+$/, "");
}

/** A URL's characters as a regular expression's literal text. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/**
 * The URLs (without their query) under `base`, the base itself included, as a regular expression:
 * msw compares it with the URL as sent, where a path pattern would first decode it (and throw on
 * a malformed escape such as `%zz`, which the store answers with a 404). A path matches the page's
 * own origin; where there is no page (Node), any origin.
 */
function urlPattern(base: string): RegExp {
  let prefix: string;
  if (base === "" || base.startsWith("/")) {
    const page = (globalThis as { location?: { origin?: string } }).location?.origin;
    prefix = (page === undefined ? "[a-z][a-z0-9+.-]*://[^/?#]+" : literal(page)) + literal(base);
  } else {
    const url = new URL(base);
    prefix = literal(url.origin + url.pathname.replace(/\/+$/, ""));
  }
  return new RegExp(`^${prefix}(?:/.*)?$`);
}

/**
 * msw handlers answering every request under `baseUrl` with `store` (a `createPetStore()` store,
 * or a `createTestStore()` one, whose seeding, `reset()`, faults and delay then apply). A
 * request whose answer is lost (a fault of the test kit that drops the connection) is a
 * network error, as `fetch` would meet.
 *
 * @example
 *   const store = await createTestStore({ pets: 3 });
 *   const server = setupServer(...petStoreHandlers(store, { baseUrl: "https://api.example/v1" }));
 */
export function petStoreHandlers(store: AdapterStore, options: PetStoreHandlersOptions = {}): HttpHandler[] {
  const handle = createFetchHandler(store);
  checkOptionNames("petStoreHandlers", options, ["baseUrl"]);
  const base = checkBaseUrl(options.baseUrl ?? store.basePath, store.basePath);
  const answer = async ({ request }: { request: Request }): Promise<Response> => {
    try {
      return await handle(request);
    } catch {
      return Response.error();
    }
  };
  return [http.all(urlPattern(base), answer)];
}
