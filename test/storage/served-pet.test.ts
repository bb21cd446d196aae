/**
 * `petOfServedText` without an id asked for takes the pet's id from its served text, as JSON reads
 * it, and refuses a text that names no valid id; a store's reader of served texts answers as it
 * does, whether a text was read before or not.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { InvalidRecordError } from "../../lib/storage/failures.ts";
import { makeServedTextReader, petOfServedText, type RecordNames } from "../../lib/storage/values.ts";

const s = suite("storage: the id of a served text");
const rest = ',"name":"Rex","categoryId":7,"status":"sold"}';
const isStorageError = (error: unknown) => error instanceof InvalidRecordError;
const text = (id: string) => `{"id":${id}${rest}`;
const NAMES: RecordNames = { backend: "sqlite", pet: (id) => `pets:${id}`, index: "t_index", sequence: "t_seq" };

s("ids of 1 to 16 digits are read as Number() reads them", () => {
  for (const id of ["1", "9", "10", "12345", "999999999999999", "1000000000000000", "9007199254740991"]) {
    assert.equal(petOfServedText(text(id), NAMES), { id: Number(id), name: "Rex", categoryId: 7, status: "sold" }, id);
  }
});

s("other forms JSON allows are read as JSON reads them", () => {
  assert.is(petOfServedText(text("1e3"), NAMES).id, 1000);
  assert.is(petOfServedText(text("12.0"), NAMES).id, 12);
  assert.is(petOfServedText(text(" 5"), NAMES).id, 5);
});

s("a text that names no valid id is an error", () => {
  for (const id of ["", "0", "-1", "1.5", "9007199254740992", "x", "00", "1x"]) {
    assert.throws(() => petOfServedText(text(id), NAMES), isStorageError, id);
  }
  assert.throws(() => petOfServedText('{"name":"Rex","categoryId":7,"status":"sold"}', NAMES), isStorageError);
});

s("an id asked for must be the text's own", () => {
  assert.is(petOfServedText(text("8"), NAMES, 8).id, 8);
  assert.throws(() => petOfServedText(text("8"), NAMES, 9), isStorageError);
});

s("a store's reader answers what petOfServedText answers, read again or not, as a new object each time", () => {
  const read = makeServedTextReader(NAMES);
  const outcome = (f: () => unknown) => {
    try {
      return { pet: f() };
    } catch (error) {
      return { error: String(error) };
    }
  };
  const cases: [string, number | undefined][] = [
    [text("7"), undefined],
    [text("7"), undefined], // the same text again
    [text("7"), 7],
    [text("7"), 8], // asked for another id
    [text("7").replace("Rex", "Max"), undefined], // another text in the same slot
    [text("263"), undefined], // another id in the same slot
    [text("1e3"), undefined],
    [text("00"), undefined],
    ['{"id":7,"name":"","categoryId":7,"status":"sold"}', undefined],
    ['{"id":7,"id":9,"name":"Rex","categoryId":7,"status":"sold"}', undefined],
    ["garbage", undefined],
    [text("7"), undefined],
  ];
  let last: unknown;
  for (const [raw, id] of cases) {
    const got = outcome(() => read(raw, id));
    assert.equal(
      got,
      outcome(() => petOfServedText(raw, NAMES, id)),
      `${raw} ${id}`,
    );
    assert.ok(got.pet === undefined || got.pet !== last, "a new object each time");
    last = got.pet;
  }
});

s("a served copy that is not a pet is an invalid record of the index, naming the pet's place", () => {
  const error = (() => {
    try {
      petOfServedText('{"id":7,"name":"","categoryId":7,"status":"sold"}', NAMES);
    } catch (e) {
      return e;
    }
  })();
  assert.instance(error, InvalidRecordError);
  assert.is((error as InvalidRecordError).key, "t_index:7");
  assert.match((error as InvalidRecordError).reason, /^the served copy is not a valid Pet/);
});

s.run();
