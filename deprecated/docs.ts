/**
 * `petstore-lib/docs`, kept until 2.0: the API reference page is petstore-server's (1.4),
 * `petstore-server/docs`. This entry re-exports it when it is installed; otherwise importing it
 * fails with one line that says what to install.
 * @deprecated Install petstore-server and import from "petstore-server/docs".
 */
import type * as Docs from "petstore-server/docs";
import { loadServerPackage } from "./load.ts";

const docs = await loadServerPackage<typeof Docs>("petstore-server/docs", "petstore-lib/docs");

export type { DocsOptions, DocsResponse } from "petstore-server/docs";
/** @deprecated Import from "petstore-server/docs". */
export const createDocs: typeof Docs.createDocs = docs.createDocs;
/** @deprecated Import from "petstore-server/docs". */
export const createDocsHandler: typeof Docs.createDocsHandler = docs.createDocsHandler;
/** @deprecated Import from "petstore-server/docs". */
export const docsRoute: typeof Docs.docsRoute = docs.docsRoute;
