/**
 * `petstore-lib/testing` as browser bundlers resolve it (the "browser" export condition): the test
 * kit in process, `createTestStore()`, with its seeding, `reset()`, `failNext()` and `delay()`;
 * not `startTestServer`, which needs a socket (node:http). Node resolves ./index.ts, which has both.
 */
export type { FailOptions, TestOperation } from "./faults.ts";
export type { TestKit, TestKitOptions } from "./kit.ts";
export type { TestRequestOptions, TestResponse, TestStore } from "./store.ts";
export { createTestStore } from "./store.ts";
