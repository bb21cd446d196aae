/**
 * One request and its whole answer, within a time: the caller's `AbortSignal` and the attempt's
 * time-out both end it, also with a `fetch` that ignores signals (an in-process handler does), so
 * a call never waits longer than it was told to.
 */

/** Any fetch: the runtime's own, a test double's, `createFetchHandler(store)`. Called with a `Request`. */
export type Fetch = (request: Request) => Promise<Response>;

/** An answer with its body read. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** The error of an attempt that took too long, named as `AbortSignal.timeout()` names its own. */
export function newTimeoutError(what: string, ms: number): Error {
  const message = `petstore-lib/client: ${what}: no answer within ${ms} ms`;
  if (typeof DOMException === "function") return new DOMException(message, "TimeoutError");
  return Object.assign(new Error(message), { name: "TimeoutError" });
}

/**
 * Sends `request` through `fetch` and reads the body. Rejects with `signal`'s reason when the
 * caller aborts, with a `TimeoutError` after `timeoutMs`, or with what `fetch` rejected with.
 */
export async function exchange(
  fetch: Fetch,
  url: string,
  init: RequestInit,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<Answer> {
  const controller = new AbortController();
  const what = `${init.method ?? "GET"} ${url}`;
  const stop = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", stop, { once: true });
  const timer = setTimeout(() => controller.abort(newTimeoutError(what, timeoutMs)), timeoutMs);
  const ended = new Promise<never>((_, reject) => {
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
  });
  ended.catch(() => {});
  // Built before the try: a request that cannot be built (a bad header value) is no network failure.
  const request = new Request(url, { ...init, signal: controller.signal });
  let response: Response | undefined;
  try {
    if (signal?.aborted) throw signal.reason;
    response = await Promise.race([fetch(request), ended]);
    const text = await Promise.race([response.text(), ended]);
    return { status: response.status, headers: response.headers, text };
  } catch (error) {
    if (response !== undefined && !response.bodyUsed) response.body?.cancel().catch(() => {});
    if (controller.signal.aborted) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
  }
}
