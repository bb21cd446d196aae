/**
 * The checks the conformance cases make, as `node:assert/strict` makes them (an `AssertionError`,
 * code ERR_ASSERTION, with `actual`, `expected` and `operator`, the case's message first), without
 * importing Node: the cases also run in a browser, against a store in the page.
 */

/** A broken rule: the same name, code and fields as `node:assert`'s errors. */
export class AssertionError extends Error {
  override name = "AssertionError";
  readonly code = "ERR_ASSERTION";
  readonly generatedMessage: boolean;

  constructor(
    message: string | undefined,
    generated: string,
    readonly actual: unknown,
    readonly expected: unknown,
    readonly operator: string,
  ) {
    super(message === undefined ? generated : `${message}\n\n${generated}`);
    this.generatedMessage = message === undefined;
  }
}

/** A value as the messages show it: strings quoted, the rest as JSON. */
function show(value: unknown): string {
  if (typeof value === "string") return `'${value}'`;
  if (value instanceof RegExp || typeof value === "function" || typeof value === "bigint") return String(value);
  return JSON.stringify(value) ?? String(value);
}

/** Plain data compared by value: primitives with Object.is, arrays and objects key by key. */
function isDeepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  const bRecord = b as Record<string, unknown>;
  return aKeys.every((key) => Object.hasOwn(b, key) && isDeepEqual((a as Record<string, unknown>)[key], bRecord[key]));
}

function fail(message: string | undefined, generated: string, actual: unknown, expected: unknown, operator: string) {
  return new AssertionError(message, generated, actual, expected, operator);
}

export interface Assert {
  equal<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
  notEqual(actual: unknown, expected: unknown, message?: string): void;
  deepEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
  match(actual: string, pattern: RegExp, message?: string): void;
  doesNotMatch(actual: string, pattern: RegExp, message?: string): void;
  ok(value: unknown, message?: string): asserts value;
}

/** `equal`, `deepEqual`, … with `node:assert/strict`'s meaning (strict equality). */
export const assert: Assert = {
  equal(actual, expected, message) {
    if (!Object.is(actual, expected)) {
      throw fail(message, `${show(actual)} !== ${show(expected)}`, actual, expected, "strictEqual");
    }
  },
  notEqual(actual, expected, message) {
    if (Object.is(actual, expected)) {
      throw fail(
        message,
        `Expected "actual" to be strictly unequal to: ${show(expected)}`,
        actual,
        expected,
        "notStrictEqual",
      );
    }
  },
  deepEqual(actual, expected, message) {
    if (!isDeepEqual(actual, expected)) {
      const generated = `Expected values to be strictly deep-equal: ${show(actual)} vs ${show(expected)}`;
      throw fail(message, generated, actual, expected, "deepStrictEqual");
    }
  },
  match(actual, pattern, message) {
    if (typeof actual !== "string" || !pattern.test(actual)) {
      const generated = `The input did not match the regular expression ${pattern}. Input: ${show(actual)}`;
      throw fail(message, generated, actual, pattern, "match");
    }
  },
  doesNotMatch(actual, pattern, message) {
    if (typeof actual !== "string" || pattern.test(actual)) {
      const generated = `The input was expected to not match the regular expression ${pattern}. Input: ${show(actual)}`;
      throw fail(message, generated, actual, pattern, "doesNotMatch");
    }
  },
  ok(value, message) {
    if (!value) throw fail(message, `${show(value)} == true`, value, true, "==");
  },
};
