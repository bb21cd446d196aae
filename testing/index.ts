/**
 * `petstore-lib/testing`: the Pet Store as a test double. `startTestServer()` is a real server on
 * 127.0.0.1, `createTestStore()` the same in process with `request()` and `fetch()`; both are
 * seeded, reset, slowed, made to fail or lose connections from code only (no request turns any of
 * it on), and keep a journal of the requests received. No runner is imported.
 *
 * @example const server = await startTestServer({ pets: 3 }); server.failNext(1, { after: "commit" });
 */
export type { FailOptions, TestOperation } from "./faults.ts";
export type { RequestRecord } from "./journal.ts";
export type { TestKit, TestKitOptions } from "./kit.ts";
export type { TestServer } from "./server.ts";
export { startTestServer } from "./server.ts";
export type { TestRequestOptions, TestResponse, TestStore } from "./store.ts";
export { createTestStore } from "./store.ts";
