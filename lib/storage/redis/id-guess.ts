/**
 * The id a plain Redis create will take, guessed before it is sent, so that one script can write
 * the pet under its value key, declared (a script must declare every key it touches): the script
 * checks that the sequence is just below the guess, then takes it. The store's commands share one
 * connection and Redis runs them in order, so once one `INCR` reply tells where the sequence is,
 * every create this process sends next takes the next id. Another process's create makes a guess
 * miss (the script writes nothing): that create then takes its id with `INCR` as before, and this
 * process guesses less for a while, as processes that create together would keep missing.
 */

/** Creates after a miss that take their id with INCR; doubled on each miss, up to the last. */
const QUIET = [8, 16, 32, 64, 128, 256, 512, 1024];
/** Guesses right in a row after which a miss is forgiven (the quiet spell starts short again). */
const FORGIVEN_AFTER = 1000;

/** A guessed id, and when it was guessed (misses of guesses made before the last loss are old news). */
export interface Guess {
  id: number;
  epoch: number;
}

export interface IdGuesses {
  /** The id to write the next plain create at, counted as sent; undefined: take one with INCR. */
  guess(): Guess | undefined;
  /** An INCR of the sequence is being sent: resolve what it answers with the function returned. */
  sendingIncr(): (id: number) => void;
  /**
   * The sequence may have moved in a way this process cannot count (a key's claim was sent, a
   * command failed, the store was cleared): no guess until an INCR tells again.
   */
  lose(): void;
  /**
   * A guessed create found another id taken (another process): no guess for a while. The guesses
   * sent with it miss too; they count once.
   */
  miss(guess: Guess): void;
  /** A guessed id was not taken (the create replayed its key's pet): the guesses sent after it will miss. */
  unused(guess: Guess): void;
}

/**
 * What a create at a guessed id tells: `taken` (it took the id), `missed` (another process had
 * taken it: nothing was written), or `unused` (the key's record decided: the id stays free).
 */
export type AtGuess<T> = { guess: "taken" | "unused"; result: T } | { guess: "missed" };

/**
 * The ids of one store's creates, with the guesses' bookkeeping inside: the storage only says how
 * to write at an id, take one with INCR, or claim one with a key.
 */
export interface IdTaking {
  /** Runs `attempt` at the guessed id, when there is a guess; undefined when there is none or it missed. */
  atGuess<T>(attempt: (id: number) => Promise<AtGuess<T>>): Promise<T | undefined>;
  /** Takes the next id with `incr` (an INCR of the sequence). */
  incr(incr: () => Promise<number>): Promise<number>;
  /** Runs what moves the sequence in a way no one counts (a key's claim, a clear): no guess until an INCR tells again. */
  uncounted<T>(run: () => Promise<T>): Promise<T>;
}

/** Id taking with guesses (one connection, commands in order), or without (`guessing: false`: replicated writes). */
export function takeIds(guessing: boolean): IdTaking {
  if (!guessing) {
    return { atGuess: async () => undefined, incr: (incr) => incr(), uncounted: (run) => run() };
  }
  const ids = makeIdGuesses();
  return {
    async atGuess<T>(attempt: (id: number) => Promise<AtGuess<T>>): Promise<T | undefined> {
      const guess = ids.guess();
      if (guess === undefined) return undefined;
      let reply: AtGuess<T>;
      try {
        reply = await attempt(guess.id);
      } catch (error) {
        ids.lose();
        throw error;
      }
      if (reply.guess === "missed") {
        ids.miss(guess);
        return undefined;
      }
      if (reply.guess === "unused") ids.unused(guess);
      return reply.result;
    },
    async incr(incr) {
      const answered = ids.sendingIncr();
      try {
        const id = await incr();
        answered(id);
        return id;
      } catch (error) {
        ids.lose();
        throw error;
      }
    },
    async uncounted(run) {
      ids.lose();
      try {
        return await run();
      } finally {
        ids.lose(); // INCRs answered meanwhile may have run before it
      }
    },
  };
}

/** The guesses' bookkeeping (tested on its own; `takeIds` is what a store uses). */
export function makeIdGuesses(): IdGuesses {
  /** The sequence once everything sent has run, when known. */
  let expected: number | undefined;
  /** Bumped whenever `expected` is lost: a reply to an INCR sent before then tells nothing. */
  let epoch = 0;
  /** INCRs sent since `expected` was lost. */
  let sentSinceLost = 0;
  let quietLevel = -1;
  let quietLeft = 0;
  let rightInARow = 0;

  const lose = () => {
    epoch++;
    expected = undefined;
    sentSinceLost = 0;
  };
  return {
    guess() {
      if (quietLeft > 0) {
        quietLeft--;
        return undefined;
      }
      if (expected === undefined || expected >= Number.MAX_SAFE_INTEGER) return undefined;
      if (++rightInARow >= FORGIVEN_AFTER) quietLevel = -1;
      expected++;
      return { id: expected, epoch };
    },
    sendingIncr() {
      const sentIn = epoch;
      if (expected !== undefined) {
        // Known: this INCR answers the next id, unless another process took one in between.
        const answer = ++expected;
        return (id) => {
          if (sentIn === epoch && id !== answer) lose();
        };
      }
      const ticket = ++sentSinceLost;
      return (id) => {
        // INCRs sent after this one are still to run, each taking one more.
        if (sentIn === epoch && expected === undefined) expected = id + (sentSinceLost - ticket);
      };
    },
    lose,
    unused(guess) {
      if (guess.epoch === epoch) lose();
    },
    miss(guess) {
      if (guess.epoch !== epoch) return;
      lose();
      quietLevel = Math.min(quietLevel + 1, QUIET.length - 1);
      quietLeft = QUIET[quietLevel] ?? 0;
      rightInARow = 0;
    },
  };
}
