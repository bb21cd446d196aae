/** Throws a TypeError naming the option unless `value` is a function (or not given). */
export function checkCallback(where: string, name: string, value: unknown, shape: string): void {
  if (value !== undefined && typeof value !== "function") {
    throw new TypeError(`${where}: options.${name} must be a function ${shape}`);
  }
}
