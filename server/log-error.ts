/**
 * How the standalone server logs what the store reports to `onError`: an invalid stored record as
 * one line with its backend, key and reason (the store reports each key at most once a minute;
 * never the value), a storage failure with its error and stack (each distinct one at most once a
 * minute), what a storage repaired by itself as a warning, anything else as an unexpected error
 * with its stack.
 */
import { isPetStoreError } from "petstore-lib";
import { InvalidRecordError, StorageWarning } from "petstore-lib/storage";
import type { Logger } from "./logger.ts";

/** Logs one error the store reported. */
export function logError(logger: Logger, error: unknown): void {
  const record = isPetStoreError(error) ? error.cause : error;
  if (record instanceof InvalidRecordError) {
    const { backend, key, reason } = record;
    logger.error({ backend, key, reason }, "invalid stored record: answered 500 internal_error (fix or delete it)");
    return;
  }
  if (error instanceof StorageWarning) {
    logger.warn({ backend: error.backend }, error.message);
    return;
  }
  if (isPetStoreError(error, "storage_unavailable")) {
    logger.error({ err: error.cause }, "storage failed: answered 503 storage_unavailable");
    return;
  }
  logger.error({ err: error }, "unexpected error");
}
