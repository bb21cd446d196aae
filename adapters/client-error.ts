/**
 * `answerClientError`: the contract's Error answer to what Node's HTTP parser refuses before any
 * handler runs (a malformed request, headers or a request line too large, a request too slow),
 * for `server.on("clientError", answerClientError)`. Node's own answer has no body and no
 * request id. Public through `petstore-lib/node-http`; the standalone and test servers use it.
 */
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { newRequestId } from "../lib/adapter.ts";
import type { ErrorCode } from "../lib/index.ts";
import { PetStoreError } from "../lib/index.ts";

/** What Node passes to `clientError`: an Error with the parser's code and, for parse errors, where it stopped. */
interface ClientError extends Error {
  code?: string;
  bytesParsed?: number;
  rawPacket?: Buffer;
}

/**
 * True when the header limit was passed before the request line ended: the packet starts a
 * request and has no line break up to where the parser stopped (Node says HPE_HEADER_OVERFLOW for both).
 */
function requestLineTooLong(error: ClientError): boolean {
  const packet = error.rawPacket;
  if (!Buffer.isBuffer(packet) || !/^[A-Z]+ /.test(packet.subarray(0, 32).toString("latin1"))) return false;
  return packet.subarray(0, error.bytesParsed ?? packet.length).indexOf(0x0a) === -1;
}

/** The contract's code for Node's error code; anything else the parser refuses is malformed. */
function codeOf(error: ClientError): ErrorCode {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return requestLineTooLong(error) ? "uri_too_long" : "headers_too_large";
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return "request_timeout";
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return "payload_too_large"; // Node's own answer is 413 too
    default:
      return "bad_request";
  }
}

/** The whole answer, head and Error body, as Node would write it: it closes the connection. */
function answerOf(code: ErrorCode): string {
  const error = new PetStoreError(code);
  const body = JSON.stringify(error.toJSON());
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ""}`,
    "content-type: application/json; charset=utf-8",
    "cache-control: no-store",
    `x-request-id: ${newRequestId()}`,
    `content-length: ${Buffer.byteLength(body)}`,
    "x-content-type-options: nosniff",
    "connection: close",
    "",
    body,
  ].join("\r\n");
}

/**
 * A `clientError` listener for a `node:http` server: answers with the contract's Error body
 * (`400 bad_request`, `408 request_timeout`, `414 uri_too_long`, `431 headers_too_large`) when
 * nothing of an answer was written yet, then closes the connection. Never throws.
 *
 * @example http.createServer(createNodeHandler(store)).on("clientError", answerClientError);
 */
export function answerClientError(error: Error, socket: Duplex): void {
  try {
    // Node's own default looks at the response in progress the same way: once its head is out,
    // anything written would corrupt it.
    const current = (socket as { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    const started = current?.headersSent === true;
    if (socket.writable && !started && (error as ClientError).code !== "ECONNRESET") {
      socket.write(answerOf(codeOf(error as ClientError)));
    }
  } catch {
    // nothing more can be said on this connection
  }
  socket.destroy();
}
