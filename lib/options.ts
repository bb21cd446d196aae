/**
 * The one check of an options object's names: a misspelt option is a `TypeError` with one message
 * shape wherever it is made, `<where>: unknown option "<name>" (known: a, b, c)`. Public, so that
 * an adapter written outside this package reports its options the same way.
 */

/**
 * Throws a `TypeError` when `options` is not an object or has a name that is not in `known`.
 *
 * @example checkOptionNames("createFetchHandler", options, ["fallback"])
 */
export function checkOptionNames(where: string, options: unknown, known: readonly string[]): void {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`${where}: options must be an object (known: ${known.join(", ")})`);
  }
  for (const name of Object.keys(options)) {
    if (!known.includes(name)) {
      throw new TypeError(`${where}: unknown option "${name}" (known: ${known.join(", ")})`);
    }
  }
}
