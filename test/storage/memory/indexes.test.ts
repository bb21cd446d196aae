/**
 * The memory storage's pages, against a plain filter of every pet: whatever the spread of a
 * status over the ids (even, clustered, one pet, none), every `after` gives the pets a filter gives.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Pet, PetStatus } from "../../../lib/schemas.ts";
import { memoryStorage } from "../../../lib/storage/memory/index.ts";

const STATUSES: PetStatus[] = ["available", "pending", "sold"];

/** Statuses by id: sold in two tight clusters and a lone pet, pending every 7th, available the rest. */
function statusOf(id: number): PetStatus {
  if ((id > 100 && id <= 140) || (id > 1500 && id <= 1510) || id === 999) return "sold";
  return id % 7 === 0 ? "pending" : "available";
}

test("memory storage: a page of one status from any place holds what filtering every pet gives, however the status is spread", async () => {
  const storage = memoryStorage();
  const all: Pet[] = [];
  for (let id = 1; id <= 2000; id++) {
    all.push(await storage.create({ name: `pet ${id}`, categoryId: 1 + (id % 5), status: statusOf(id) }));
  }
  const afters = [...Array.from({ length: 2003 }, (_, i) => i), 0.5, 140.5, 999.9, 1e9];
  for (const status of STATUSES) {
    for (const limit of [1, 3, 20]) {
      for (const after of afters) {
        const expected = all.filter((p) => p.status === status && p.id > after).slice(0, limit);
        const got = await storage.list({ status, after, limit });
        if (JSON.stringify(got) !== JSON.stringify(expected)) {
          assert.equal(got, expected, `status ${status}, after ${after}, limit ${limit}`);
        }
      }
    }
  }
  const everyone = await storage.list({ after: 1990, limit: 5 });
  assert.equal(everyone, all.slice(1990, 1995), "without a status: the next ids");
});

test("memory storage: an empty status and a status held by one pet page correctly", async () => {
  const storage = memoryStorage();
  for (let id = 1; id <= 50; id++)
    await storage.create({ name: `p${id}`, categoryId: 1, status: id === 30 ? "sold" : "available" });
  assert.equal(await storage.list({ status: "pending", after: 0, limit: 10 }), []);
  assert.equal(
    (await storage.list({ status: "sold", after: 0, limit: 10 })).map((p) => p.id),
    [30],
  );
  assert.equal(
    (await storage.list({ status: "sold", after: 29, limit: 10 })).map((p) => p.id),
    [30],
  );
  assert.equal(await storage.list({ status: "sold", after: 30, limit: 10 }), []);
});

test.run();
