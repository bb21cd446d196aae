/**
 * `petstore-lib/transfer`: moving a store's data (contract 1.3 and 1.4, "Moving data"): an export
 * as records or lines, an import of records or of an export file (checked whole first, its store
 * marked until it is done), the undoing of an unfinished import, and two stores compared page by
 * page. Node.js only (files, hashes). The `petstore export`, `import` and `migrate` commands of
 * petstore-server are built on it; the test kit seeds a store from an export file with it.
 */
export type { ExportOptions } from "./export.ts";
export { exportLines, exportStore } from "./export.ts";
export type { ExportHeader, ExportRecord } from "./format.ts";
export { ImportError } from "./format.ts";
export type { AbandonResult, ImportOptions, ImportResult } from "./import.ts";
export { abandonImport, importFile, importStore } from "./import.ts";
export { VerifyError, verifyStores } from "./verify.ts";
