/**
 * A SQLite page read as one row (`count(*)` and the texts joined by line feeds): `pageTexts` splits
 * it, or says the page must be read row by row; `inIdOrder` puts pets back in id order.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { inIdOrder, pageTexts } from "../../../lib/storage/sqlite/reads.ts";

const s = suite("storage: sqlite pages as one row");

s("pageTexts: the texts of the row, none for an empty page", () => {
  assert.equal(pageTexts({ n: 0, pets: null }), []);
  assert.equal(pageTexts(undefined), []);
  assert.equal(pageTexts({ n: 1, pets: '{"id":1}' }), ['{"id":1}']);
  assert.equal(pageTexts({ n: 3, pets: "a\nb\n[3,null]" }), ["a", "b", "[3,null]"]);
});

s("pageTexts: undefined when a text held a line feed (more pieces than rows) or the row is not text", () => {
  assert.is(pageTexts({ n: 2, pets: "a\nb\nc" }), undefined);
  assert.is(pageTexts({ n: 1, pets: "{\n}" }), undefined);
  assert.is(pageTexts({ n: 2, pets: null }), undefined);
  assert.is(pageTexts({ n: 1, pets: 7 }), undefined);
});

s("inIdOrder: pets already in order are the same array; others are sorted by id", () => {
  const ordered = [{ id: 1 }, { id: 2 }, { id: 9 }];
  assert.is(inIdOrder(ordered), ordered);
  assert.equal(inIdOrder([{ id: 3 }, { id: 1 }, { id: 2 }]), [{ id: 1 }, { id: 2 }, { id: 3 }]);
  assert.equal(inIdOrder([]), []);
});

s.run();
