/**
 * Which pets a Redis page will hold, guessed before it is read, so that the page script can declare
 * their value keys (a script must declare every key it touches) and read index and values in one
 * round trip. A page asked before is guessed to hold what it held then: the first pages of a store
 * do not change as pets are added. An unfiltered page never asked is guessed dense (ids follow the
 * sequence: `after`+1 on). A wrong guess costs what no guess costs: a second round trip.
 */

/** Pages remembered per store; past this, forgotten all at once (a walk of a large store asks each page once). */
const REMEMBERED = 256;

/** The keys and arguments of the page script (redis-scripts.ts, PAGE) for one page and its guess. */
export interface PageInput {
  keys: string[];
  args: string[];
}

export interface PageGuesses<Status extends string> {
  /** The page script's input for this page, with the ids it is guessed to hold (none when there is no guess). */
  inputOf(status: Status | undefined, after: number, limit: number): PageInput;
  /** What a page held when it was not guessed right: its guess from now on. */
  learn(status: Status | undefined, after: number, limit: number, ids: readonly string[]): void;
}

/** The ids after+1 … after+limit (fewer near 2^53 - 1). */
function denseIds(after: number, limit: number): string[] {
  const ids: string[] = [];
  for (let id = after + 1; id <= after + limit && id <= Number.MAX_SAFE_INTEGER; id++) ids.push(String(id));
  return ids;
}

/**
 * The guesses of one store, whose index of `status` is `indexOf(status)` and whose pet `id` has
 * its value at `valueKeyOf(id)`. @example const { keys, args } = guesses.inputOf(undefined, 0, 20)
 */
export function makePageGuesses<Status extends string>(
  indexOf: (status?: Status) => string,
  valueKeyOf: (id: string) => string,
): PageGuesses<Status> {
  const inputs = new Map<string, PageInput>();
  const nameOf = (status: Status | undefined, after: number, limit: number) => `${status ?? ""} ${after} ${limit}`;
  const remember = (name: string, status: Status | undefined, after: number, limit: number, ids: readonly string[]) => {
    const input = { keys: [indexOf(status)], args: [`(${after}`, String(limit)] };
    for (const id of ids) {
      input.keys.push(valueKeyOf(id));
      input.args.push(id);
    }
    if (inputs.size >= REMEMBERED) inputs.clear();
    inputs.set(name, input);
    return input;
  };
  return {
    inputOf(status, after, limit) {
      const name = nameOf(status, after, limit);
      const known = inputs.get(name);
      if (known !== undefined) return known;
      return remember(name, status, after, limit, status === undefined ? denseIds(after, limit) : []);
    },
    learn(status, after, limit, ids) {
      remember(nameOf(status, after, limit), status, after, limit, ids);
    },
  };
}
