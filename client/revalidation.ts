/**
 * The client's revalidation (`createPetStoreClient({ revalidate: true })`): the last answer to each
 * read it made (a pet, a page) is kept with its `ETag`, the next read of that URL sends it as
 * `If-None-Match`, and a `304 Not Modified` is answered from what was kept: the server sends no
 * body. At most MAX_KEPT answers, the least recently read going first.
 */
import type { Answer } from "./exchange.ts";

/** Answers kept: enough for the pages a walk reads again, bounded so that a long walk cannot grow it without end. */
export const MAX_KEPT = 100;

export class Revalidation {
  private readonly kept = new Map<string, Answer>();

  /** The answer kept for `url` (to send its `ETag`, and to answer a 304 with), if any. */
  heldFor(url: string): Answer | undefined {
    return this.kept.get(url);
  }

  /**
   * The answer to use for a read of `url` that was sent holding `held`: on a `304`, `held` with the
   * 304's own headers over its; else `answer` itself, kept when it is a success with an `ETag`.
   */
  settle(url: string, answer: Answer, held: Answer | undefined): Answer {
    if (answer.status === 304 && held !== undefined) {
      this.keep(url, held);
      const headers = new Headers(held.headers);
      answer.headers.forEach((value, name) => {
        if (name !== "content-length") headers.set(name, value);
      });
      return { status: held.status, headers, text: held.text };
    }
    if (answer.status >= 200 && answer.status < 300 && answer.headers.has("etag")) this.keep(url, answer);
    return answer;
  }

  private keep(url: string, answer: Answer): void {
    this.kept.delete(url); // set again below: the most recently read goes last
    this.kept.set(url, answer);
    if (this.kept.size > MAX_KEPT) this.kept.delete(this.kept.keys().next().value as string);
  }
}

/** The `If-None-Match` of a read holding `held`. */
export function conditionOf(held: Answer | undefined): Record<string, string> {
  const etag = held?.headers.get("etag");
  return etag === null || etag === undefined ? {} : { "if-none-match": etag };
}
