/**
 * `petstore-lib/auth`: who a caller is. `apiKeys` and `jwt` build the `auth` option of
 * `createPetStore`; a `Principal` carries the caller's id and scopes.
 *
 * @example import { apiKeys, jwt } from "petstore-lib/auth";
 */
export type { JwtOptions, JwtVerifier } from "../auth/jwt.ts";
export { jwt } from "../auth/jwt.ts";
export type { ApiKey } from "../auth/keys.ts";
export { apiKeys } from "../auth/keys.ts";
export type { AuthOption, AuthSettings } from "../auth/option.ts";
export type { Principal, Scope, Verdict, VerifyToken } from "../auth/principal.ts";
export { SCOPES } from "../auth/principal.ts";
export type { AuthThrottledObservation, FailureLimitOptions } from "../auth/throttle.ts";
