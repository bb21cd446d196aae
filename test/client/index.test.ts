/** `petstore-lib/client`'s entry point: `nextCursor` (and its types) for generated clients, the core's own function. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { HeadersLike, ResponseLike } from "../../client/index.ts";
import { nextCursor } from "../../client/index.ts";
import * as root from "../../lib/index.ts";

test("client entry: nextCursor is importable from petstore-lib/client and reads the next page's cursor from Link", () => {
  const headers: HeadersLike = new Headers({ link: '</v1/pets?limit=2&cursor=abc>; rel="next"' });
  const answer: ResponseLike = { headers };
  assert.is(nextCursor(answer), "abc");
  assert.is(nextCursor({ headers: {} }), undefined);
});

test("client entry: petstore-lib/client's nextCursor is petstore-lib's", () => {
  assert.is(nextCursor, root.nextCursor);
});

test.run();
