/**
 * How the standalone server logs what the store reports to `onError`: an invalid stored record as
 * one line with its backend, key and reason (the store reports each key at most once a minute;
 * never the value), anything else as an unexpected error with its stack.
 */
import { InvalidRecordError, isPetStoreError } from "../lib/index.ts";
import type { Logger } from "./logger.ts";

/** Logs one error the store reported. */
export function logError(logger: Logger, error: unknown): void {
  const record = isPetStoreError(error) ? error.cause : error;
  if (record instanceof InvalidRecordError) {
    const { backend, key, reason } = record;
    logger.error({ backend, key, reason }, "invalid stored record: answered 500 internal_error (fix or delete it)");
    return;
  }
  logger.error({ err: error }, "unexpected error");
}
