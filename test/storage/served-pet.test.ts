/**
 * `petOfServedText` without an id asked for takes the pet's id from its served text, as JSON reads
 * it, and refuses a text that names no valid id.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { petOfServedText } from "../../lib/storage/values.ts";

const s = suite("storage: the id of a served text");
const rest = ',"name":"Rex","categoryId":7,"status":"sold"}';
const isStorageError = (error: unknown) => (error as { code?: unknown }).code === "internal_error";
const text = (id: string) => `{"id":${id}${rest}`;

s("ids of 1 to 16 digits are read as Number() reads them", () => {
  for (const id of ["1", "9", "10", "12345", "999999999999999", "1000000000000000", "9007199254740991"]) {
    assert.equal(
      petOfServedText(text(id), "sqlite"),
      { id: Number(id), name: "Rex", categoryId: 7, status: "sold" },
      id,
    );
  }
});

s("other forms JSON allows are read as JSON reads them", () => {
  assert.is(petOfServedText(text("1e3"), "sqlite").id, 1000);
  assert.is(petOfServedText(text("12.0"), "sqlite").id, 12);
  assert.is(petOfServedText(text(" 5"), "sqlite").id, 5);
});

s("a text that names no valid id is an error", () => {
  for (const id of ["", "0", "-1", "1.5", "9007199254740992", "x", "00", "1x"]) {
    assert.throws(() => petOfServedText(text(id), "sqlite"), isStorageError, id);
  }
  assert.throws(() => petOfServedText('{"name":"Rex","categoryId":7,"status":"sold"}', "sqlite"), isStorageError);
});

s("an id asked for must be the text's own", () => {
  assert.is(petOfServedText(text("8"), "sqlite", 8).id, 8);
  assert.throws(() => petOfServedText(text("8"), "sqlite", 9), isStorageError);
});

s.run();
