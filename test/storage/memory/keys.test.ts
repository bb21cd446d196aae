/**
 * The memory storage's idempotency records: expired records are swept (a bounded number per
 * write), a key used again after its expiry keeps its new record, and the columns stay right
 * through compaction and growth.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { fingerprintOf } from "../../../lib/idempotency.ts";
import { MemoryKeys } from "../../../lib/storage/memory/keys.ts";

const s = suite("memory idempotency records");
const print = (i: number) => fingerprintOf({ name: `p${i}`, categoryId: 1, status: "available" });

s("memory: expired records are swept, at most the batch size per sweep, and unexpired ones stay", () => {
  const keys = new MemoryKeys();
  for (let i = 0; i < 300; i++) keys.add("a", `k${i}`, print(i), i + 1, 1000 + i);
  keys.sweep(1099, 64);
  assert.is(keys.size, 300 - 64, "one sweep removes at most its batch");
  keys.sweep(1099, 1000);
  assert.is(keys.size, 200, "records expiring at or before now are gone");
  assert.is(keys.find("a", "k99", 1099), undefined);
  const slot = keys.find("a", "k100", 1099);
  assert.ok(slot !== undefined);
  assert.is(keys.petId(slot), 101);
  assert.ok(keys.matches(slot, print(100)));
  assert.not.ok(keys.matches(slot, print(101)));
  keys.sweep(10_000, 1000);
  assert.is(keys.size, 0);
});

s("memory: a record past its expiry is not found even before it is swept", () => {
  const keys = new MemoryKeys();
  keys.add("a", "k", print(1), 1, 1000);
  assert.ok(keys.find("a", "k", 999) !== undefined);
  assert.is(keys.find("a", "k", 1000), undefined);
});

s("memory: a key used again after it expired keeps its new record when the old one is swept", () => {
  const keys = new MemoryKeys();
  keys.add("a", "k", print(1), 1, 1000);
  keys.add("a", "k", print(2), 2, 5000);
  keys.sweep(2000, 100);
  const slot = keys.find("a", "k", 2000);
  assert.ok(slot !== undefined);
  assert.is(keys.petId(slot), 2);
  assert.ok(keys.matches(slot, print(2)));
});

s("memory: scopes keep identical keys apart", () => {
  const keys = new MemoryKeys();
  keys.add("a", "k", print(1), 1, 1000);
  assert.is(keys.find("b", "k", 0), undefined);
  keys.add("b", "k", print(2), 2, 1000);
  assert.is(keys.petId(keys.find("b", "k", 0) as number), 2);
  assert.is(keys.petId(keys.find("a", "k", 0) as number), 1);
});

s("memory: records stay right through 20,000 rolling writes (compaction and growth)", () => {
  const keys = new MemoryKeys();
  for (let i = 0; i < 20_000; i++) {
    keys.sweep(i, 64);
    keys.add("a", `k${i}`, print(i % 50), i + 1, i + 3000);
    assert.ok(keys.size <= 3001, `at most what retention allows (${keys.size})`);
  }
  for (const i of [17_000, 18_500, 19_999]) {
    const slot = keys.find("a", `k${i}`, 19_999);
    assert.ok(slot !== undefined, `k${i}`);
    assert.is(keys.petId(slot), i + 1);
    assert.ok(keys.matches(slot, print(i % 50)));
  }
  assert.is(keys.find("a", "k16000", 19_999), undefined);
});

s.run();
