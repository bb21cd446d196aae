/**
 * `petstore-lib/openapi`: the OpenAPI 3.1 document of a store's contract, built for its options
 * (base path, deprecation dates). `petstore-lib/openapi.json` is the default one as a file.
 *
 * @example import { buildOpenApi } from "petstore-lib/openapi";
 */
export type { OpenApiDocument, OpenApiOptions } from "../openapi.ts";
export { buildOpenApi } from "../openapi.ts";
