/** The patterns the contract gives for names a request or an option carries, each written once. */

/** A base path such as "/v1" or "/api/v1": segments of unreserved URL characters. */
export const BASE_PATH_PATTERN = /^(\/[A-Za-z0-9._~-]+)+$/;

/** A client's `X-Request-Id` that is echoed back: 1 to 128 characters of `[A-Za-z0-9._-]`. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
