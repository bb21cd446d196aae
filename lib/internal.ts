/**
 * What the standalone server (server/) and the test kit (testing/) need from the core and users
 * do not: the package does not export this file, so nothing here is API. Adapters never import
 * it (a lint rule checks): they are built from `petstore-lib` alone, as anyone else's are.
 */
export { isPrincipalId } from "./auth/principal.ts";
export { tooLarge } from "./body.ts";
export { firstValue } from "./http.ts";
export { jsonString } from "./json.ts";
export { BASE_PATH_PATTERN } from "./patterns.ts";
export { JSON_TYPE, Responder, responseHeaders } from "./response.ts";
export { utf8Length } from "./text.ts";
export { otelApi } from "./tracing.ts";
