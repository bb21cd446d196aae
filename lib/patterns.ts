/** The pattern of a base path, shared by the store's option and the server's configuration. */

/** A base path such as "/v1" or "/api/v1": segments of unreserved URL characters. */
export const BASE_PATH_PATTERN = /^(\/[A-Za-z0-9._~-]+)+$/;
