/**
 * `nextCursor(response)` reads the cursor of listPets' `Link: <…&cursor=C>; rel="next"` from a
 * `Response`, a plain header object (Node's, repeated fields as arrays) or anything with `get`, so
 * that a client taking `cursor` as a query parameter walks every page; undefined on the last page.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createFetchHandler } from "../../adapters/fetch.ts";
import { nextCursor } from "../../lib/next-cursor.ts";
import { AUTH, createMany, makeStore } from "../support/helpers.ts";

test("nextCursor: following it from real answers (createFetchHandler's Response) visits every pet once, in order, with the filter kept", async () => {
  const store = makeStore();
  await createMany(store, 23, (i) => (i % 3 === 0 ? "sold" : "available"));
  const handler = createFetchHandler(store);
  const walk = async (query: string) => {
    const ids: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const url = `http://pets.test/v1/pets?limit=4${query}${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`;
      const response = await handler(new Request(url, { headers: { authorization: AUTH } }));
      assert.is(response.status, 200);
      ids.push(...((await response.json()) as { id: number }[]).map((p) => p.id));
      cursor = nextCursor(response);
      pages++;
    } while (cursor !== undefined && pages < 100);
    return { ids, pages };
  };
  const all = await walk("");
  assert.equal(
    all.ids,
    Array.from({ length: 23 }, (_, i) => i + 1),
  );
  assert.is(all.pages, 6);
  const sold = await walk("&status=sold");
  assert.equal(sold.ids, [1, 4, 7, 10, 13, 16, 19, 22]);
  await store.close();
});

test("nextCursor: undefined on the last page, without a Link, and for the successor-version link of getPet", () => {
  assert.is(nextCursor(new Response("[]")), undefined);
  const successor = new Response("{}", { headers: { link: '</v1/pets>; rel="successor-version"' } });
  assert.is(nextCursor(successor), undefined);
  assert.is(nextCursor({ headers: {} }), undefined);
  assert.is(nextCursor({ headers: { link: undefined } }), undefined);
});

test("nextCursor: a plain header object, whatever the case of the field name, and a repeated field as an array", () => {
  const link = '</v1/pets?limit=2&cursor=abc>; rel="next"';
  assert.is(nextCursor({ headers: { link } }), "abc");
  assert.is(nextCursor({ headers: { Link: link } }), "abc");
  assert.is(nextCursor({ headers: { link: ['</v1/pets>; rel="first"', link] } }), "abc");
  assert.is(nextCursor({ headers: { get: (name: string) => (name === "link" ? link : null) } }), "abc");
});

test("nextCursor: RFC 8288 forms: several links in one field, rel lists, unquoted and upper-case rel, quoted commas, absolute URLs", () => {
  const cursorOf = (link: string) => nextCursor({ headers: { link } });
  assert.is(cursorOf('</v1/pets?cursor=p>; rel="prev", </v1/pets?cursor=n>; rel="next"'), "n");
  assert.is(cursorOf('</v1/pets?cursor=n>; rel="last next"'), "n");
  assert.is(cursorOf("</v1/pets?cursor=n>;rel=next"), "n");
  assert.is(cursorOf('</v1/pets?cursor=n>; rel="NEXT"'), "n");
  assert.is(cursorOf('</v1/pets?cursor=n>; title="a, b"; rel="next"'), "n", "a comma inside a quoted string");
  assert.is(cursorOf('<https://api.example.com/v1/pets?limit=5&status=sold&cursor=MTA%3D>; rel="next"'), "MTA=");
  assert.is(cursorOf('</v1/pets?limit=5>; rel="next"'), undefined, "a next link without a cursor");
  assert.is(cursorOf('</v1/pets?cursor=n>; rel="nextish"'), undefined);
  assert.is(cursorOf("garbage <"), undefined);
});

test.run();
