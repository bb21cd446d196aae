/**
 * The origin every conformance target's store allows for CORS (`cors: { origins: [CORS_ORIGIN] }`),
 * in process and in the runtimes' children alike, so that all targets give the same answers.
 */
export const CORS_ORIGIN = "https://shop.example";
