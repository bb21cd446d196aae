/**
 * `petstore-lib/internal`: what petstore-server (server/) and the test kit (testing/) need from the
 * core and users do not. It is exported for petstore-server alone and is **not API**: anything here
 * may change in any release. Adapters never import it (a lint rule checks): they are built from
 * `petstore-lib` alone, as anyone else's are.
 */
export { isPrincipalId } from "./auth/principal.ts";
export { tooLarge } from "./body.ts";
export { firstValue } from "./http.ts";
export { jsonString } from "./json.ts";
export { BASE_PATH_PATTERN } from "./patterns.ts";
export { printable } from "./printable.ts";
export { JSON_TYPE, Responder, responseHeaders } from "./response.ts";
export { invalidRecordOf } from "./storage/failures.ts";
export { utf8Length } from "./text.ts";
export { otelApi } from "./tracing.ts";
