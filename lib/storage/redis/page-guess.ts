/**
 * Which pets a Redis page will hold, guessed before it is read, so that the values can be asked
 * for (`MGET`) together with the index (`ZRANGEBYSCORE`): two native commands in one round trip
 * instead of one after the other. A page asked before is guessed to hold what it held then (the
 * first pages of a store do not change as pets are added); an unfiltered page never asked is
 * guessed dense, `after`+1 on (ids follow the sequence). The index read decides what the page
 * holds: a guess only saves the wait, and a wrong one costs the second `MGET` that no guess costs.
 */
import { makePageMap } from "../page-map.ts";

/** The ids a page is guessed to hold (as the index writes them, and as numbers), and their value keys. */
export interface PageGuess {
  ids: readonly string[];
  /** The ids as numbers, checked when the page was learnt: a page that holds its guess parses none. */
  numbers: readonly number[];
  valueKeys: string[];
}

export interface PageGuesses<Status extends string> {
  /** The pets this page is guessed to hold; undefined when there is no guess (a filtered page never read). */
  guessOf(status: Status | undefined, after: number, limit: number): PageGuess | undefined;
  /** What a page held when it was not guessed right (its ids and, checked, their numbers): its guess from now on. */
  learn(
    status: Status | undefined,
    after: number,
    limit: number,
    ids: readonly string[],
    numbers: readonly number[],
  ): void;
}

/**
 * True when the page read (`ids`, in order) is the guess or the start of it: every value it needs
 * was asked for, at the same place.
 */
export function guessHolds(guess: Pick<PageGuess, "ids">, ids: readonly unknown[]): boolean {
  if (ids.length > guess.ids.length) return false;
  for (let i = 0; i < ids.length; i++) if (ids[i] !== guess.ids[i]) return false;
  return true;
}

/** The ids after+1 … after+limit (fewer near 2^53 - 1). */
function denseIds(after: number, limit: number): number[] {
  const ids: number[] = [];
  for (let id = after + 1; id <= after + limit && id <= Number.MAX_SAFE_INTEGER; id++) ids.push(id);
  return ids;
}

/**
 * The guesses of one store, whose pet `id` has its value at `valueKeyOf(id)` (../page-map.ts
 * remembers them: undefined for a page learnt empty).
 * @example const guess = guesses.guessOf(undefined, 0, 20) // ids "1" … "20"
 */
export function makePageGuesses<Status extends string>(valueKeyOf: (id: string) => string): PageGuesses<Status> {
  const known = makePageMap<Status, PageGuess | undefined>();
  const remember = (
    status: Status | undefined,
    after: number,
    limit: number,
    ids: readonly string[],
    numbers: readonly number[],
  ) => {
    const guess = ids.length === 0 ? undefined : { ids, numbers, valueKeys: ids.map(valueKeyOf) };
    known.set(status, after, limit, guess);
    return guess;
  };
  return {
    guessOf(status, after, limit) {
      const kept = known.get(status, after, limit);
      if (kept !== undefined) return kept.value;
      if (status !== undefined) return remember(status, after, limit, [], []);
      const numbers = denseIds(after, limit);
      return remember(status, after, limit, numbers.map(String), numbers);
    },
    learn: remember,
  };
}
