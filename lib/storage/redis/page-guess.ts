/**
 * Which pets a Redis page will hold, guessed before it is read, so that the values can be asked
 * for (`MGET`) together with the index (`ZRANGEBYSCORE`): two native commands in one round trip
 * instead of one after the other. A page asked before is guessed to hold what it held then (the
 * first pages of a store do not change as pets are added); an unfiltered page never asked is
 * guessed dense, `after`+1 on (ids follow the sequence). The index read decides what the page
 * holds: a guess only saves the wait, and a wrong one costs the second `MGET` that no guess costs.
 */

/** Pages remembered per store; past this, forgotten all at once (a walk of a large store asks each page once). */
const REMEMBERED = 256;

/** The ids a page is guessed to hold, and their value keys. */
export interface PageGuess {
  ids: readonly string[];
  valueKeys: string[];
}

export interface PageGuesses<Status extends string> {
  /** The pets this page is guessed to hold; undefined when there is no guess (a filtered page never read). */
  guessOf(status: Status | undefined, after: number, limit: number): PageGuess | undefined;
  /** What a page held when it was not guessed right: its guess from now on. */
  learn(status: Status | undefined, after: number, limit: number, ids: readonly string[]): void;
}

/**
 * True when the page read (`ids`, in order) is the guess or the start of it: every value it needs
 * was asked for, at the same place.
 */
export function guessHolds(guess: PageGuess, ids: readonly unknown[]): boolean {
  if (ids.length > guess.ids.length) return false;
  for (let i = 0; i < ids.length; i++) if (ids[i] !== guess.ids[i]) return false;
  return true;
}

/** The ids after+1 … after+limit (fewer near 2^53 - 1). */
function denseIds(after: number, limit: number): string[] {
  const ids: string[] = [];
  for (let id = after + 1; id <= after + limit && id <= Number.MAX_SAFE_INTEGER; id++) ids.push(String(id));
  return ids;
}

/**
 * The guesses of one store, whose pet `id` has its value at `valueKeyOf(id)`.
 * @example const guess = guesses.guessOf(undefined, 0, 20) // ids "1" … "20"
 */
export function makePageGuesses<Status extends string>(valueKeyOf: (id: string) => string): PageGuesses<Status> {
  const known = new Map<string, PageGuess | undefined>();
  const nameOf = (status: Status | undefined, after: number, limit: number) => `${status ?? ""} ${after} ${limit}`;
  const remember = (name: string, ids: readonly string[]) => {
    const guess = ids.length === 0 ? undefined : { ids, valueKeys: ids.map(valueKeyOf) };
    if (known.size >= REMEMBERED) known.clear();
    known.set(name, guess);
    return guess;
  };
  return {
    guessOf(status, after, limit) {
      const name = nameOf(status, after, limit);
      if (known.has(name)) return known.get(name);
      return remember(name, status === undefined ? denseIds(after, limit) : []);
    },
    learn(status, after, limit, ids) {
      remember(nameOf(status, after, limit), ids);
    },
  };
}
