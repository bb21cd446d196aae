/**
 * The key under which a storage takes the store's `onError`, for what no answer shows (SQLite: its
 * file removed under a running server). A registered symbol in a file of its own, so that the
 * core loads no backend's file to find it.
 */
export const REPORT_TO: symbol = Symbol.for("petstore-lib: report to");

/** Hands `report` to `storage` when it takes one. */
export function reportStorageTo(storage: object, report: (error: unknown) => void): void {
  const take = (storage as Record<symbol, unknown>)[REPORT_TO];
  if (typeof take === "function") take(report);
}
