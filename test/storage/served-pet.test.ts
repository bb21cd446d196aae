/**
 * `servedPetOf` reads a pet's id from the start of its served text (`{"id":<id>,…`) digit by digit;
 * what it reads must be what `Number()` of those characters gives, for every form an id can take.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { servedPetOf } from "../../lib/storage/values.ts";

const s = suite("storage: the id of a served text");
const rest = ',"name":"Rex","categoryId":7,"status":"sold"}';
const isStorageError = (error: unknown) => (error as { code?: unknown }).code === "internal_error";
const text = (id: string) => `{"id":${id}${rest}`;

s("ids of 1 to 16 digits are read as Number() reads them", () => {
  for (const id of ["1", "9", "10", "12345", "999999999999999", "1000000000000000", "9007199254740991"]) {
    assert.equal(servedPetOf(text(id), "sqlite"), { id: Number(id), name: "Rex", categoryId: 7, status: "sold" }, id);
  }
});

s("other forms JSON allows are read by Number() and the text's JSON, as before", () => {
  assert.is(servedPetOf(text("1e3"), "sqlite").id, 1000);
  assert.is(servedPetOf(text("12.0"), "sqlite").id, 12);
  assert.is(servedPetOf(text(" 5"), "sqlite").id, 5);
});

s("a text that names no valid id is an error", () => {
  for (const id of ["", "0", "-1", "1.5", "9007199254740992", "x", "00", "1x"]) {
    assert.throws(() => servedPetOf(text(id), "sqlite"), isStorageError, id);
  }
  assert.throws(() => servedPetOf(`{"name":"Rex","id":1}`, "sqlite"), isStorageError);
});

s.run();
