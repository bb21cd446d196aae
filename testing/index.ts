/**
 * `petstore-lib/testing`: the Pet Store as a test double, for code that calls the API and code
 * that embeds it. `startTestServer()` is a real server on 127.0.0.1 and a free port;
 * `createTestStore()` the same in process, with `request()`. Both can be seeded, reset between
 * tests, slowed down and made to fail, from code only (no request turns any of it on). No test
 * runner is imported.
 *
 * @example
 *   const server = await startTestServer({ pets: 3 });
 *   await fetch(`${server.url}/pets`, { headers: { authorization: `Bearer ${server.key}` } });
 *   server.failNext(1, { status: 503 });
 *   await server.reset();
 *   await server.close();
 */
export type { FailOptions, TestOperation } from "./faults.ts";
export type { TestKit, TestKitOptions } from "./kit.ts";
export type { TestServer } from "./server.ts";
export { startTestServer } from "./server.ts";
export type { TestRequestOptions, TestResponse, TestStore } from "./store.ts";
export { createTestStore } from "./store.ts";
