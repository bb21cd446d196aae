/**
 * The test server's listener: the Node adapter's steps, from the helpers `petstore-lib/node-http`
 * exports, with one thing only a test server does: when the kit loses a connection on purpose
 * (`failNext` with `reset` or `after: "commit"`), the socket is closed and nothing is written.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { announcesBody, cannotRespond, mustClose, nodeRequest, readBody } from "../adapters/node-http.ts";
import type { PetStoreResponse } from "../lib/index.ts";
import type { OpenKit } from "./kit.ts";

/** Writes the answer; `Connection: close` when an unread body could be too big to drain. */
function send(req: IncomingMessage, res: ServerResponse, response: PetStoreResponse, maxBodyBytes: number): void {
  if (cannotRespond(req, res)) return;
  const headers = response.headers;
  if (mustClose(req, req.headers, maxBodyBytes)) headers.connection = "close";
  if (response.status === 304) delete headers["content-length"]; // as the Node adapter sends a 304
  try {
    res.writeHead(response.status, headers);
    res.end(response.body);
  } catch {
    res.destroy(); // only a broken socket gets here: there is nobody to answer
  }
}

/** `(req, res)` for `http.createServer`: every request to the kit, answered or dropped. */
export function createKitListener(kit: OpenKit): (req: IncomingMessage, res: ServerResponse) => void {
  const { maxBodyBytes } = kit.store;
  return (req, res) => {
    const body = announcesBody(req.headers) ? (limit: number) => readBody(req, limit) : undefined;
    const request = nodeRequest(req.method ?? "GET", req.url ?? "/", req.headers, body);
    kit.respond(request).then(
      (response) => send(req, res, response, maxBodyBytes),
      () => req.socket.destroy(),
    );
  };
}
