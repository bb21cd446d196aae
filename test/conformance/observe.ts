/**
 * Every answer the conformance suite receives passes through `observeResponse`, on every target.
 * It records them (see `observations`) and checks each one against the committed openapi.json
 * (test/support/openapi-validator.ts): an answer that breaks the document fails the case that produced it.
 */
import { assertConforms } from "../support/openapi-validator.ts";

/** The request as the suite sent it. */
export interface ObservedRequest {
  method: string;
  /** The request target: path and query string. */
  path: string;
  headers: Readonly<Record<string, string>>;
}

/** The answer as the target returned it (lower-case header names, body as text). */
export interface ObservedResponse {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string;
}

export interface Observation {
  target: string;
  request: ObservedRequest;
  response: ObservedResponse;
}

/** Everything observed so far, in order. */
export const observations: Observation[] = [];

/** Records one answer of one target, and throws when it breaks openapi.json. */
export function observeResponse(target: string, request: ObservedRequest, response: ObservedResponse): void {
  observations.push({ target, request, response });
  try {
    assertConforms({ method: request.method, path: request.path, ...response });
  } catch (error) {
    (error as Error).message = `[${target}] ${request.method} ${request.path}: ${(error as Error).message}`;
    throw error;
  }
}
