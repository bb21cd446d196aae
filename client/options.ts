/**
 * `createPetStoreClient`'s options, checked once: a mistake is a `TypeError` naming the option,
 * at creation rather than at the first call. Defaults and the reasons for them: docs/client.md.
 */
import { checkOptionNames } from "../lib/options.ts";
import type { DeprecationNotice } from "./answers.ts";
import type { Fetch } from "./exchange.ts";
import type { RetryOptions, RetryPolicy } from "./retry.ts";
import { DEFAULT_RETRY } from "./retry.ts";

export interface PetStoreClientOptions {
  /** The API's base URL, base path included: `"https://pets.example/v1"` (a test server's `url`). */
  baseUrl: string | URL;
  /**
   * The API key or access token, sent as `Authorization: Bearer <key>`; or a function giving it,
   * asked before each attempt (an OAuth 2.0 access token that your token cache renews).
   */
  key: string | (() => string | Promise<string>);
  /** The fetch to send with (default: the global `fetch`); called with one `Request`. `createFetchHandler(store)` fits. */
  fetch?: Fetch;
  /** How failed requests are tried again; `false` sends each request once. See `RetryOptions`. */
  retry?: RetryOptions | false;
  /** How long one attempt may take, answer body included (default 10000 ms). */
  timeoutMs?: number;
  /** Called once per client, the first time `getPet`'s answer says it is deprecated. */
  onDeprecation?: (notice: DeprecationNotice) => void;
  /**
   * Keep the last answer to each read (a pet, a page; at most 100) and send its `ETag` as
   * `If-None-Match` the next time: an unchanged answer comes back `304` without a body and is
   * answered from the kept one. Default false.
   */
  revalidate?: boolean;
}

/** The options once checked, with the defaults applied. */
export interface ClientConfig {
  /** The base URL without a trailing slash. */
  base: string;
  /** The `Authorization` value of the next attempt. */
  authorization: () => string | Promise<string>;
  fetch: Fetch;
  retry: RetryPolicy;
  timeoutMs: number;
  onDeprecation: ((notice: DeprecationNotice) => void) | undefined;
  revalidate: boolean;
}

export const DEFAULT_TIMEOUT_MS = 10_000;

const WHERE = "createPetStoreClient";
const KNOWN = ["baseUrl", "key", "fetch", "retry", "timeoutMs", "onDeprecation", "revalidate"];
const RETRY_KNOWN = ["attempts", "baseDelayMs", "maxDelayMs", "totalMs"];

function checkCount(name: string, value: unknown, min: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new TypeError(`${WHERE}: ${name} must be an integer, ${min} or more (got ${JSON.stringify(value)})`);
  }
  return value;
}

/** The base URL, absolute (a relative one is resolved against the page's, in a browser). */
function checkBaseUrl(baseUrl: unknown): string {
  const page = (globalThis as { location?: { href?: string } }).location?.href;
  let url: URL | undefined;
  try {
    url = baseUrl instanceof URL || typeof baseUrl === "string" ? new URL(baseUrl, page) : undefined;
  } catch {}
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash) {
    throw new TypeError(
      `${WHERE}: baseUrl must be an http(s) URL with the base path and no query, e.g. "https://pets.example/v1" (got ${JSON.stringify(String(baseUrl))})`,
    );
  }
  return url.href.replace(/\/+$/, "");
}

function checkRetry(retry: unknown): RetryPolicy {
  if (retry === undefined) return DEFAULT_RETRY;
  if (retry === false) return { ...DEFAULT_RETRY, attempts: 1 };
  if (retry === null || typeof retry !== "object") {
    throw new TypeError(`${WHERE}: retry must be false or an object (known: ${RETRY_KNOWN.join(", ")})`);
  }
  checkOptionNames(`${WHERE}: retry`, retry, RETRY_KNOWN);
  const given = retry as RetryOptions;
  return {
    attempts: checkCount("retry.attempts", given.attempts ?? DEFAULT_RETRY.attempts, 1),
    baseDelayMs: checkCount("retry.baseDelayMs", given.baseDelayMs ?? DEFAULT_RETRY.baseDelayMs, 0),
    maxDelayMs: checkCount("retry.maxDelayMs", given.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs, 0),
    totalMs: checkCount("retry.totalMs", given.totalMs ?? DEFAULT_RETRY.totalMs, 1),
  };
}

const isKey = (key: unknown): key is string => typeof key === "string" && /^[\x21-\x7e]+$/.test(key);

/** The `Authorization` value of what a key function gives; a TypeError when it gives no key. */
async function bearerOf(key: () => string | Promise<string>): Promise<string> {
  const given = await key();
  if (!isKey(given))
    throw new TypeError(`${WHERE}: the key function gave no key (a string of visible ASCII characters)`);
  return `Bearer ${given}`;
}

/** Checks the options; throws a TypeError for anything that cannot work. */
export function checkClientOptions(options: PetStoreClientOptions): ClientConfig {
  if (options === null || typeof options !== "object") {
    throw new TypeError(`${WHERE}: options { baseUrl, key } are required`);
  }
  checkOptionNames(WHERE, options, KNOWN);
  const { key, fetch, onDeprecation } = options;
  // A header value: visible ASCII (fetch would throw on anything else, at every call).
  if (typeof key !== "function" && (typeof key !== "string" || !isKey(key))) {
    throw new TypeError(
      `${WHERE}: key must be a non-empty string of visible ASCII characters, or a function () => string | Promise<string>`,
    );
  }
  if (fetch !== undefined && typeof fetch !== "function") {
    throw new TypeError(`${WHERE}: fetch must be a function (request: Request) => Promise<Response>`);
  }
  if (onDeprecation !== undefined && typeof onDeprecation !== "function") {
    throw new TypeError(`${WHERE}: onDeprecation must be a function (notice) => void`);
  }
  if (options.revalidate !== undefined && typeof options.revalidate !== "boolean") {
    throw new TypeError(`${WHERE}: revalidate must be true or false (got ${JSON.stringify(options.revalidate)})`);
  }
  const send = fetch ?? ((request: Request) => globalThis.fetch(request));
  return {
    base: checkBaseUrl(options.baseUrl),
    authorization: typeof key === "string" ? () => `Bearer ${key}` : () => bearerOf(key),
    fetch: send,
    retry: checkRetry(options.retry),
    timeoutMs: checkCount("timeoutMs", options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 1),
    onDeprecation,
    revalidate: options.revalidate === true,
  };
}
