/**
 * Guessed ids of Redis creates (lib/storage/redis/id-guess.ts): the counting, and over a real
 * server, one round trip a create once the sequence is known, the fall back to INCR when another
 * process created, and two stores creating together on one namespace losing nothing.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PetStorage } from "../../../lib/storage/port.ts";
import { makeIdGuesses, takeIds } from "../../../lib/storage/redis/id-guess.ts";
import { redisStorage } from "../../../lib/storage/redis/index.ts";
import { REDIS_URL, RUN, serviceAvailable } from "../services.ts";
import { watchCommands } from "./monitor.ts";

const g = suite("redis id guesses");

g("no guess until an INCR answers; then the id after every INCR still to run", () => {
  const ids = makeIdGuesses();
  assert.is(ids.guess()?.id, undefined);
  const first = ids.sendingIncr();
  ids.sendingIncr();
  ids.sendingIncr();
  assert.is(ids.guess()?.id, undefined, "nothing answered yet");
  first(5);
  assert.is(ids.guess()?.id, 8, "5, then 6 and 7 for the two INCRs sent after");
  assert.is(ids.guess()?.id, 9);
});

g("an INCR answered with another id than counted (another process) stops the guesses", () => {
  const ids = makeIdGuesses();
  ids.sendingIncr()(1);
  const next = ids.sendingIncr();
  assert.is(ids.guess()?.id, 3);
  next(4);
  assert.is(ids.guess()?.id, undefined);
  ids.sendingIncr()(10);
  assert.is(ids.guess()?.id, 11, "the next INCR tells again");
});

g("after lose(), an INCR sent before tells nothing", () => {
  const ids = makeIdGuesses();
  const before = ids.sendingIncr();
  ids.lose();
  before(3);
  assert.is(ids.guess()?.id, undefined);
});

g("a guess left unused (a replay) stops the guesses until an INCR tells again, with no quiet spell", () => {
  const ids = makeIdGuesses();
  ids.sendingIncr()(1);
  const replay = ids.guess();
  assert.is(replay?.id, 2);
  if (replay) ids.unused(replay);
  assert.is(ids.guess(), undefined);
  ids.sendingIncr()(2);
  assert.is(ids.guess()?.id, 3);
});

g("a miss: INCR for the next 8 creates, then 16 after another miss, and no guess at 2^53 - 1", () => {
  const ids = makeIdGuesses();
  ids.sendingIncr()(1);
  const first = ids.guess();
  assert.is(first?.id, 2);
  if (first) ids.miss(first);
  ids.sendingIncr()(3);
  for (let i = 0; i < 8; i++) {
    assert.is(ids.guess()?.id, undefined, `quiet ${i}`);
    ids.sendingIncr()(4 + i);
  }
  const second = ids.guess();
  assert.is(second?.id, 12);
  if (second) ids.miss(second);
  ids.sendingIncr()(13);
  let quiet = 0;
  while (ids.guess() === undefined && quiet < 100) quiet++;
  assert.is(quiet, 16);
  const high = makeIdGuesses();
  high.sendingIncr()(Number.MAX_SAFE_INTEGER);
  assert.is(high.guess()?.id, undefined);
});

g("the guesses sent together miss together: they count as one miss, and none undoes what an INCR told since", () => {
  const ids = makeIdGuesses();
  ids.sendingIncr()(1);
  const burst = [ids.guess(), ids.guess(), ids.guess()];
  assert.equal(
    burst.map((guess) => guess?.id),
    [2, 3, 4],
  );
  if (burst[0]) ids.miss(burst[0]);
  for (let i = 0; i < 8; i++) {
    assert.is(ids.guess(), undefined, `quiet ${i}`);
    ids.sendingIncr()(10 + i);
  }
  if (burst[1]) ids.miss(burst[1]);
  if (burst[2]) ids.miss(burst[2]);
  assert.is(ids.guess()?.id, 18, "quiet for 8 creates only, and the sequence still known");
});
g(
  "takeIds: a create runs at the guess once an INCR told where the sequence is; a miss, a failure or an uncounted run stops the guesses",
  async () => {
    const ids = takeIds(true);
    const at = (id: number) => Promise.resolve({ guess: "taken" as const, result: id });
    assert.is(await ids.atGuess(at), undefined, "no guess before an INCR");
    assert.is(await ids.incr(async () => 1), 1);
    assert.is(await ids.atGuess(at), 2);
    assert.is(await ids.atGuess(async () => ({ guess: "missed" as const })), undefined);
    assert.is(await ids.atGuess(at), undefined, "quiet after a miss");
    const fresh = takeIds(true);
    await fresh.incr(async () => 5);
    const failed = await fresh
      .atGuess(() => Promise.reject(new Error("lost")))
      .then(
        () => "answered",
        (error: Error) => error.message,
      );
    assert.is(failed, "lost");
    assert.is(await fresh.atGuess(at), undefined, "a failed create: the sequence is not known");
    await fresh.incr(async () => 9);
    assert.is(await fresh.uncounted(async () => "claimed"), "claimed");
    assert.is(await fresh.atGuess(at), undefined, "a claim moved the sequence uncounted");
    await fresh.incr(async () => 12);
    assert.is(await fresh.atGuess(async (id) => ({ guess: "unused" as const, result: -id })), -13, "a replay's answer");
    assert.is(await fresh.atGuess(at), undefined, "a guess left unused: the next ones would miss");
  },
);

g("takeIds without guessing (replicated writes): never a guess; INCR and claims run as they are", async () => {
  const ids = takeIds(false);
  assert.is(await ids.incr(async () => 1), 1);
  assert.is(await ids.atGuess(async () => ({ guess: "taken" as const, result: 2 })), undefined);
  assert.is(await ids.uncounted(async () => "claimed"), "claimed");
});
g.run();

if (serviceAvailable("redis", "Redis creates at a guessed id")) {
  const s = suite("redis creates: one round trip at a guessed id");
  const ns = `${RUN}_guess`;
  const opened: PetStorage[] = [];
  let watch: Awaited<ReturnType<typeof watchCommands>> | undefined;
  s.after(async () => {
    await opened[0]?.clear?.();
    await Promise.all(opened.map((storage) => storage.close()));
    watch?.close();
  });
  const pet = (name: string) => ({ name, categoryId: 1, status: "available" as const });

  s(
    "once an INCR told where the sequence stands, a create is one EVALSHA; another process's create costs one miss",
    async () => {
      const storage = await redisStorage({ url: REDIS_URL, namespace: ns });
      opened.push(storage);
      assert.is((await storage.create(pet("a"))).id, 1);
      assert.is((await storage.create(pet("b"))).id, 2, "the server learns the script (EVALSHA, NOSCRIPT, EVAL)");
      watch = await watchCommands(ns);
      await watch.since(storage);
      assert.is((await storage.create(pet("b2"))).id, 3);
      assert.equal(await watch.since(storage), ["EVALSHA"], "one round trip");

      const other = await redisStorage({ url: REDIS_URL, namespace: ns });
      opened.push(other);
      assert.is((await other.create(pet("other"))).id, 4);
      await watch.since(storage);
      assert.is((await storage.create(pet("c"))).id, 5);
      // The next id is taken by a script that checks the sequence holds an integer (NEXT_ID), then the write.
      assert.equal(
        await watch.since(storage),
        ["EVALSHA", "EVALSHA", "EVALSHA"],
        "missed, then the next id and the write",
      );
      assert.equal(
        (await storage.list({ after: 0, limit: 10 })).map((p) => p.name),
        ["a", "b", "b2", "other", "c"],
      );
    },
  );

  s(
    "a create with an Idempotency-Key is one EVALSHA too; a replay takes no id, and the next create none twice",
    async () => {
      const storage = await redisStorage({ url: REDIS_URL, namespace: `${ns}_keyed` });
      opened.push(storage);
      const HOUR = 3_600_000;
      const record = (key: string, fingerprint = "f".repeat(64)) => ({
        scope: "caller",
        key,
        fingerprint,
        now: Date.now(),
        expiresAt: Date.now() + HOUR,
      });
      assert.is((await storage.create(pet("a"))).id, 1);
      const first = await storage.createOnce?.(pet("k1"), record("k1"));
      assert.equal(first, { pet: { id: 2, ...pet("k1") }, replayed: false }, "the server learns the script");
      const keyed = await watchCommands(`${ns}_keyed`);
      try {
        await keyed.since(storage);
        assert.equal(await storage.createOnce?.(pet("k2"), record("k2")), {
          pet: { id: 3, ...pet("k2") },
          replayed: false,
        });
        assert.equal(await keyed.since(storage), ["EVALSHA"], "one round trip");
        assert.equal(await storage.createOnce?.(pet("k2"), record("k2")), {
          pet: { id: 3, ...pet("k2") },
          replayed: true,
        });
        assert.equal(await storage.createOnce?.(pet("k2"), record("k2", "e".repeat(64))), { conflict: "reused" });
        assert.equal(await keyed.since(storage), ["EVALSHA", "GET", "EVALSHA"], "the replay reads its pet");
        assert.is((await storage.create(pet("b"))).id, 4, "no id was taken by the replay");
        assert.equal(await keyed.since(storage), ["EVALSHA", "EVALSHA"], "where the sequence stands is asked again");
        assert.is((await storage.create(pet("c"))).id, 5);
        assert.equal(await keyed.since(storage), ["EVALSHA"]);
      } finally {
        keyed.close();
        await storage.clear?.();
      }
    },
  );

  s(
    "two stores creating together on one namespace: every pet once, ids 1 to n in creation order, all listed",
    async () => {
      const [one, two] = opened;
      assert.ok(one && two);
      await one.clear?.();
      const made = await Promise.all(
        Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? one : two).create(pet(`p${i}`))),
      );
      const ids = made.map((p) => p.id).sort((a, b) => a - b);
      assert.equal(
        ids,
        Array.from({ length: 400 }, (_, i) => i + 1),
      );
      const listed = [];
      for (let after = 0; ; ) {
        const page = await one.list({ after, limit: 100 });
        if (page.length === 0) break;
        listed.push(...page);
        after = page[page.length - 1]?.id ?? after;
      }
      assert.equal(
        listed,
        [...made].sort((a, b) => a.id - b.id),
      );
      for (const p of made) assert.equal(await two.get(p.id), p);
    },
  );
  s.run();
}
