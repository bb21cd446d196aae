/**
 * Redis pages in one round trip: the page script declares the value keys of the pets it guesses
 * (lib/storage/redis-page-guess.ts) and reads index and values together; a page it did not guess
 * right is still served right, with a second command. Counted with MONITOR on the shared server,
 * by the lines that name this run's namespace and come from a client (not from a script).
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PetStorage } from "../../lib/storage/port.ts";
import { redisStorage } from "../../lib/storage/redis.ts";
import { makePageGuesses } from "../../lib/storage/redis-page-guess.ts";
import { watchCommands } from "./redis-monitor.ts";
import { REDIS_URL, RUN, serviceAvailable } from "./services.ts";

const g = suite("redis page guesses");
const indexOf = (status?: string) => (status === undefined ? "ns:ids" : `ns:ids:${status}`);
const valueKeyOf = (id: string) => `ns::${id}`;

g("an unfiltered page never asked is guessed dense from after + 1; a filtered one is not guessed", () => {
  const guesses = makePageGuesses(indexOf, valueKeyOf);
  assert.equal(guesses.inputOf(undefined, 40, 3), {
    keys: ["ns:ids", "ns::41", "ns::42", "ns::43"],
    args: ["(40", "3", "41", "42", "43"],
  });
  assert.equal(guesses.inputOf("sold", 0, 3), { keys: ["ns:ids:sold"], args: ["(0", "3"] });
});

g("a page learnt is guessed as it was, per status, after and limit", () => {
  const guesses = makePageGuesses(indexOf, valueKeyOf);
  guesses.learn("sold", 0, 3, ["2", "9"]);
  guesses.learn(undefined, 0, 3, ["1", "5"]);
  assert.equal(guesses.inputOf("sold", 0, 3), { keys: ["ns:ids:sold", "ns::2", "ns::9"], args: ["(0", "3", "2", "9"] });
  assert.equal(guesses.inputOf(undefined, 0, 3).args, ["(0", "3", "1", "5"]);
  assert.equal(guesses.inputOf("sold", 0, 4).args, ["(0", "4"], "another limit is another page");
});

g("no guess goes past 2^53 - 1", () => {
  const guesses = makePageGuesses(indexOf, valueKeyOf);
  assert.equal(guesses.inputOf(undefined, Number.MAX_SAFE_INTEGER - 1, 5).args, [
    `(${Number.MAX_SAFE_INTEGER - 1}`,
    "5",
    String(Number.MAX_SAFE_INTEGER),
  ]);
});

g("at most 256 pages are remembered: then all are forgotten at once", () => {
  const guesses = makePageGuesses(indexOf, valueKeyOf);
  for (let after = 0; after < 256; after++) guesses.learn("sold", after, 1, [String(after + 1)]);
  assert.equal(guesses.inputOf("sold", 0, 1).args, ["(0", "1", "1"]);
  guesses.learn("sold", 999, 1, ["1000"]);
  assert.equal(guesses.inputOf("sold", 0, 1).args, ["(0", "1"], "forgotten");
  assert.equal(guesses.inputOf("sold", 999, 1).args, ["(999", "1", "1000"]);
});
g.run();

if (serviceAvailable("redis", "Redis pages in one round trip")) {
  const s = suite("redis pages: one round trip when guessed");
  const ns = `${RUN}_pages`;
  let storage: PetStorage | undefined;
  let watch: Awaited<ReturnType<typeof watchCommands>> | undefined;
  s.after(async () => {
    await storage?.clear?.();
    await storage?.close();
    watch?.close();
  });

  s(
    "a first page, a filtered page asked again and a walk each take one EVALSHA; the values are Keyv's, read then",
    async () => {
      storage = await redisStorage({ url: REDIS_URL, namespace: ns });
      for (let i = 1; i <= 30; i++) {
        await storage.create({ name: `p${i}`, categoryId: 1, status: i % 3 === 0 ? "sold" : "available" });
      }
      await storage.list({ after: 29, limit: 1 }); // the server learns the script (EVALSHA, NOSCRIPT, EVAL)
      watch = await watchCommands(ns);
      await watch.since(storage);

      const first = await storage.list({ after: 0, limit: 20 });
      assert.equal(
        first.map((pet) => pet.id),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      assert.equal(await watch.since(storage), ["EVALSHA"], "one round trip: index and values in one script");

      const last = await storage.list({ after: 20, limit: 20 });
      assert.equal(
        last.map((pet) => pet.name),
        Array.from({ length: 10 }, (_, i) => `p${i + 21}`),
      );
      assert.equal(await watch.since(storage), ["EVALSHA"], "a shorter last page was guessed too");

      const sold = await storage.list({ status: "sold", after: 0, limit: 5 });
      assert.equal(
        sold.map((pet) => pet.id),
        [3, 6, 9, 12, 15],
      );
      assert.equal(await watch.since(storage), ["EVALSHA", "MGET"], "a filtered page never asked: two commands");
      assert.equal(await storage.list({ status: "sold", after: 0, limit: 5 }), sold);
      assert.equal(await watch.since(storage), ["EVALSHA"], "asked again: guessed");
    },
  );

  s("a page whose guess went wrong (new pets, a gap in the ids) is served as it is now", async () => {
    assert.ok(storage && watch);
    await storage.list({ status: "sold", after: 27, limit: 5 });
    await storage.create({ name: "p31", categoryId: 1, status: "available" });
    await storage.create({ name: "p32", categoryId: 1, status: "available" });
    await storage.create({ name: "p33", categoryId: 1, status: "sold" });
    await watch.since(storage);
    assert.equal(
      (await storage.list({ status: "sold", after: 27, limit: 5 })).map((pet) => pet.id),
      [30, 33],
      "the new pet 33 is on the page learnt before it existed",
    );
    assert.equal(await watch.since(storage), ["EVALSHA", "MGET"]);
    assert.equal(
      (await storage.list({ status: "sold", after: 27, limit: 5 })).map((pet) => pet.id),
      [30, 33],
    );
    assert.equal(await watch.since(storage), ["EVALSHA"], "learnt again");

    const { createClient } = await import("@keyv/redis");
    const client = createClient({ url: REDIS_URL });
    await client.connect();
    await client.incr(`${ns}:seq`); // id 34 taken and never written, as by a create cut short
    client.destroy();
    await storage.create({ name: "p35", categoryId: 1, status: "available" });
    await watch.since(storage);
    assert.equal(
      (await storage.list({ after: 32, limit: 2 })).map((pet) => pet.name),
      ["p33", "p35"],
      "guessed 33 and 34",
    );
    assert.equal(await watch.since(storage), ["EVALSHA", "MGET"]);
  });
  s.run();
}
