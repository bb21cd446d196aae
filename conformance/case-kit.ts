/**
 * What the conformance cases share (cases.ts, caching-cases.ts): the shape of a case, the key's
 * header, a GET, the deprecation headers, and the checks of an Error answer and of headers.
 */
import { assert } from "./assert.ts";
import type { Answer, Client, Req } from "./client.ts";

/** One case as written: the rule it proves, and its run against a target's client. */
export interface Case {
  /** The rule the case proves. */
  name: string;
  run(c: Client): Promise<void>;
}

/** The header of the target's key. */
export const auth = (c: Client) => ({ authorization: `Bearer ${c.key}` });
/** The headers every answer of the getPet route carries. */
export const deprecation = (c: Client) => ({
  deprecation: "@1795564800",
  sunset: "Thu, 05 Dec 2030 00:00:00 GMT",
  link: `<${c.base}/pets>; rel="successor-version"`,
});

/** A GET of `path` under the base path ("" is the base path itself), with the key unless told. */
export const get = (c: Client, path: string, headers: Record<string, string> = auth(c)): Req => ({
  method: "GET",
  path: `${c.base}${path}` || "/",
  headers,
});
/** Asserts an Error answer: status, and a body `{ code, message, status }` (plus optional details). */
export function expectError(answer: Answer, status: number, code: string): Record<string, unknown> {
  assert.equal(answer.status, status, `status (body ${answer.body})`);
  const body = JSON.parse(answer.body);
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.message, "string");
  return body;
}

/** Asserts each header of `expected` (undefined: absent). */
export function expectHeaders(answer: Answer, expected: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(expected)) assert.equal(answer.headers[name], value, `header ${name}`);
}
