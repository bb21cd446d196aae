/**
 * The body limit on the server's routes that take no body (health, readiness, docs, metrics): a
 * body within the store's limit is read and dropped, so a kept-alive connection stays usable;
 * past it the answer is 413 and the connection closes with the rest unread (a Content-Length over
 * the limit is refused before any of it is read). Node would otherwise drain any size.
 */
import type { IncomingMessage } from "node:http";
import type { PetStoreResponse } from "petstore-lib";
import { isPetStoreError } from "petstore-lib";
import { Responder, tooLarge } from "petstore-lib/internal";
import { announcesBody, readBody } from "petstore-lib/node-http";

/** True when the request's body is over `limit` bytes; a body within it has been read and dropped. */
export async function bodyTooLarge(req: IncomingMessage, limit: number): Promise<boolean> {
  if (!announcesBody(req.headers)) return false;
  const length = req.headers["content-length"];
  if (length !== undefined && /^[0-9]+$/.test(length) && Number(length) > limit) return true;
  try {
    await readBody(req, limit);
    return false;
  } catch (error) {
    return isPetStoreError(error, "payload_too_large"); // else the client went away: nobody to answer
  }
}

/** The core's 413 answer, closing the connection. */
export function tooLargeAnswer(limit: number, head: boolean, requestId: string): PetStoreResponse {
  return new Responder({ head, requestId }).error(tooLarge(limit), { connection: "close" });
}
