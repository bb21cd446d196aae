/**
 * `createPetStoreClient({ revalidate: true })` (client/revalidation.ts): a read of a pet or a page
 * read before sends its ETag as If-None-Match, and the server's body-less 304 is answered from the
 * kept answer; a changed page comes back whole; without the option nothing is sent or kept.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createPetStoreClient } from "../../client/index.ts";
import { MAX_KEPT } from "../../client/revalidation.ts";
import type { TestStore } from "../../testing/index.ts";
import { createTestStore } from "../../testing/index.ts";

let t: TestStore;
test.before(async () => {
  t = await createTestStore({ pets: 25 });
});
test.before.each(() => t.reset());
test.after(() => t.close());

/** A client on the test store whose fetch records the If-None-Match of each request and the answer's status. */
function client(revalidate?: boolean) {
  const sent: { ifNoneMatch: string | null; status: number }[] = [];
  const pets = createPetStoreClient({
    baseUrl: "http://petstore.test/v1",
    key: t.key,
    ...(revalidate === undefined ? {} : { revalidate }),
    fetch: async (request) => {
      const response = await t.fetch(request);
      sent.push({ ifNoneMatch: request.headers.get("if-none-match"), status: response.status });
      return response;
    },
  });
  return { pets, sent };
}

test("client revalidate: a pet read again is asked with its ETag; the 304 (no body) gives the same pet", async () => {
  const { pets, sent } = client(true);
  const first = await pets.getPet(3);
  const again = await pets.getPet(3);
  assert.equal(again, first);
  assert.is(sent[0]?.ifNoneMatch, null);
  assert.match(sent[1]?.ifNoneMatch ?? "", /^"[0-9a-f]{16}"$/);
  assert.is(sent[1]?.status, 304);
});

test("client revalidate: a page read again answers 304 and gives the same pets and the same next cursor", async () => {
  const { pets, sent } = client(true);
  const first = await pets.listPets({ limit: 10 });
  const again = await pets.listPets({ limit: 10 });
  assert.equal(again, first);
  assert.ok(again.nextCursor, "the kept Link gives the next page");
  assert.equal(
    sent.map((s) => s.status),
    [200, 304],
  );
  const walked: number[] = [];
  for await (const pet of pets.pets({ limit: 10 })) walked.push(pet.id);
  for await (const pet of pets.pets({ limit: 10 })) walked.push(pet.id);
  assert.is(walked.length, 50);
  assert.equal(
    sent.slice(2).map((s) => s.status),
    [304, 200, 200, 304, 304, 304],
    "the second walk is all 304s",
  );
});

test("client revalidate: a page that changed (a pet was added to the last one) comes back whole, with the new pet", async () => {
  const { pets, sent } = client(true);
  const before = await pets.listPets({ limit: 100 });
  await t.store.createPet({ name: "late", categoryId: 1 });
  const after = await pets.listPets({ limit: 100 });
  assert.is(after.pets.length, before.pets.length + 1);
  assert.is(after.pets.at(-1)?.name, "late");
  assert.is(sent[1]?.status, 200);
  assert.ok(sent[1]?.ifNoneMatch, "it asked with the old tag");
});

test("client revalidate: without the option, no If-None-Match is sent and every read is answered whole", async () => {
  for (const pets of [client(), client(false)]) {
    await pets.pets.getPet(1);
    await pets.pets.getPet(1);
    assert.equal(
      pets.sent.map((s) => [s.ifNoneMatch, s.status]),
      [
        [null, 200],
        [null, 200],
      ],
    );
  }
});

test(`client revalidate: at most ${MAX_KEPT} answers are kept, the least recently read going first`, async () => {
  const { pets, sent } = client(true);
  await t.store.createPet({ name: "x", categoryId: 1 }); // 26 pets
  for (let limit = 1; limit <= MAX_KEPT; limit++) await pets.listPets({ limit });
  await pets.listPets({ limit: 1 }); // read again: now the most recent
  await pets.getPet(1); // one more answer: the least recently read (limit=2) goes
  sent.length = 0;
  await pets.listPets({ limit: 2 });
  await pets.listPets({ limit: 1 });
  await pets.listPets({ limit: MAX_KEPT });
  assert.equal(
    sent.map((s) => s.status),
    [200, 304, 304],
  );
});

test("client revalidate: the option is a boolean", () => {
  assert.throws(
    () => createPetStoreClient({ baseUrl: "http://x.test/v1", key: "k", revalidate: "yes" as never }),
    /revalidate must be true or false/,
  );
});

test.run();
