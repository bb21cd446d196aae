/**
 * Redis pages in one round trip (lib/storage/redis/page-guess.ts): the values of the pets a page
 * is guessed to hold are asked (MGET) in the same write as the index (ZRANGEBYSCORE). Proven with
 * a proxy that holds Redis's replies back: what the store sends before any reply is one round
 * trip. A page guessed wrong is still served as the index says, with a second MGET.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PetStorage } from "../../../lib/storage/port.ts";
import { redisStorage } from "../../../lib/storage/redis/index.ts";
import { guessHolds, makePageGuesses } from "../../../lib/storage/redis/page-guess.ts";
import { REDIS_URL, RUN, serviceAvailable } from "../services.ts";
import { type HoldProxy, startHoldProxy } from "./hold-proxy.ts";

const g = suite("redis page guesses");
const valueKeyOf = (id: string) => `ns::${id}`;

g("an unfiltered page never asked is guessed dense from after + 1; a filtered one is not guessed", () => {
  const guesses = makePageGuesses(valueKeyOf);
  assert.equal(guesses.guessOf(undefined, 40, 3), {
    ids: ["41", "42", "43"],
    numbers: [41, 42, 43],
    valueKeys: ["ns::41", "ns::42", "ns::43"],
  });
  assert.is(guesses.guessOf("sold", 0, 3), undefined);
});

g("a page learnt is guessed as it was, per status, after and limit; an empty one is not guessed", () => {
  const guesses = makePageGuesses(valueKeyOf);
  guesses.learn("sold", 0, 3, ["2", "9"], [2, 9]);
  guesses.learn(undefined, 0, 3, [], []);
  assert.equal(guesses.guessOf("sold", 0, 3)?.valueKeys, ["ns::2", "ns::9"]);
  assert.equal(guesses.guessOf("sold", 0, 3)?.numbers, [2, 9], "the ids as numbers, not parsed again");
  assert.is(guesses.guessOf(undefined, 0, 3), undefined, "an empty page asks for no values");
  assert.is(guesses.guessOf("sold", 0, 4), undefined, "another limit is another page");
});

g("a page read holds when it is the guess or its start, in order", () => {
  const guess = { ids: ["1", "2", "3"], valueKeys: [] };
  assert.ok(guessHolds(guess, ["1", "2", "3"]));
  assert.ok(guessHolds(guess, ["1", "2"]), "a shorter last page");
  assert.ok(guessHolds(guess, []));
  assert.not.ok(guessHolds(guess, ["1", "3"]), "a gap");
  assert.not.ok(guessHolds(guess, ["1", "2", "3", "4"]));
});

g("no guess goes past 2^53 - 1", () => {
  const guesses = makePageGuesses(valueKeyOf);
  assert.equal(guesses.guessOf(undefined, Number.MAX_SAFE_INTEGER - 1, 5)?.ids, [String(Number.MAX_SAFE_INTEGER)]);
});

g("at most 256 pages are remembered: then all are forgotten at once", () => {
  const guesses = makePageGuesses(valueKeyOf);
  for (let after = 0; after < 256; after++) guesses.learn("sold", after, 1, [String(after + 1)], [after + 1]);
  assert.equal(guesses.guessOf("sold", 0, 1)?.ids, ["1"]);
  guesses.learn("sold", 999, 1, ["1000"], [1000]);
  assert.is(guesses.guessOf("sold", 0, 1), undefined, "forgotten");
  assert.equal(guesses.guessOf("sold", 999, 1)?.ids, ["1000"]);
});
g.run();

if (serviceAvailable("redis", "Redis pages in one round trip")) {
  const s = suite("redis pages: index and values in one round trip when guessed");
  const ns = `${RUN}_pages`;
  let proxy: HoldProxy | undefined;
  let storage: PetStorage | undefined;
  s.after(async () => {
    proxy?.release();
    await storage?.clear?.();
    await storage?.close();
    await proxy?.close();
  });

  /** The page, and the commands the store sent before Redis answered anything. */
  async function pageInOneTrip(page: { status?: "sold"; after: number; limit: number }, waitFor = "MGET") {
    assert.ok(proxy && storage);
    proxy.hold();
    const pending = storage.list(page);
    // Within the socket time-out (2/3 of 2 s), which a held reply would set off.
    const first = await proxy.sent(waitFor, waitFor === "MGET" ? 600 : 200);
    proxy.release();
    return { pets: await pending, first };
  }

  s("a first page and a last shorter page: ZRANGEBYSCORE and MGET sent together", async () => {
    proxy = await startHoldProxy();
    storage = await redisStorage({ url: proxy.url, namespace: ns });
    for (let i = 1; i <= 30; i++) {
      await storage.create({ name: `p${i}`, categoryId: 1, status: i % 3 === 0 ? "sold" : "available" });
    }
    const first = await pageInOneTrip({ after: 0, limit: 20 });
    assert.equal(first.first, ["ZRANGEBYSCORE", "MGET"], "one round trip");
    assert.equal(
      first.pets.map((pet) => pet.name),
      Array.from({ length: 20 }, (_, i) => `p${i + 1}`),
    );
    const last = await pageInOneTrip({ after: 20, limit: 20 });
    assert.equal(last.first, ["ZRANGEBYSCORE", "MGET"]);
    assert.equal(
      last.pets.map((pet) => pet.id),
      Array.from({ length: 10 }, (_, i) => i + 21),
    );
  });

  s("a filtered page never asked takes two round trips, then one", async () => {
    const never = await pageInOneTrip({ status: "sold", after: 0, limit: 5 }, "none");
    assert.equal(never.first, ["ZRANGEBYSCORE"], "no values asked before the index answered");
    assert.equal(
      never.pets.map((pet) => pet.id),
      [3, 6, 9, 12, 15],
    );
    const again = await pageInOneTrip({ status: "sold", after: 0, limit: 5 });
    assert.equal(again.first, ["ZRANGEBYSCORE", "MGET"], "asked again: guessed");
    assert.equal(again.pets, never.pets);
  });

  s("a page whose guess went wrong (a new pet, a gap in the ids) is served as the index says", async () => {
    assert.ok(storage);
    await storage.list({ status: "sold", after: 27, limit: 5 }); // learnt: [30]
    await storage.create({ name: "p31", categoryId: 1, status: "available" });
    await storage.create({ name: "p32", categoryId: 1, status: "sold" });
    const grown = await pageInOneTrip({ status: "sold", after: 27, limit: 5 });
    assert.equal(
      grown.pets.map((pet) => pet.name),
      ["p30", "p32"],
      "the new pet is on the page learnt before it was",
    );

    const { createClient } = await import("@keyv/redis");
    const client = createClient({ url: REDIS_URL });
    await client.connect();
    await client.incr(`${ns}:seq`); // id 33 taken and never written, as by a create cut short
    client.destroy();
    await storage.create({ name: "p34", categoryId: 1, status: "available" });
    const gap = await storage.list({ after: 31, limit: 3 });
    assert.equal(
      gap.map((pet) => pet.name),
      ["p32", "p34"],
      "guessed 32, 33 and 34: served 32 and 34",
    );
    assert.equal(await storage.list({ after: 31, limit: 3 }), gap, "learnt");
  });
  s.run();
}
