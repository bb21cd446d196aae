/** Watches for what a fuzz run must never cause: polluted prototypes and unhandled rejections. */

const WATCHED = { Object, Array, String, Number, Function, Promise, Error } as const;

/** The own property names of the built-in prototypes, to compare before and after a run. */
export function prototypeSnapshot(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, ctor] of Object.entries(WATCHED)) {
    out[name] = Reflect.ownKeys(ctor.prototype).map(String).sort();
  }
  out["Object.prototype's prototype"] = [String(Object.getPrototypeOf(Object.prototype))];
  return out;
}

/** Collects unhandled rejections from now until `stop()`. */
export function unhandledRejections(): { seen: unknown[]; stop(): void } {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => seen.push(reason);
  process.on("unhandledRejection", listener);
  return { seen, stop: () => process.off("unhandledRejection", listener) };
}

/** The error a failed fuzz run throws: the broken rule first, then how to replay it. */
export function fuzzFailure(error: unknown, suite: string): Error {
  const cause = (error as { cause?: unknown })?.cause;
  const rule = cause instanceof Error ? cause.message : "";
  const seed = process.env.FUZZ_SEED ?? "20261125 (the default)";
  return new Error(
    `fuzz ${suite} failed with FUZZ_SEED=${seed}; replay: FUZZ_SEED=${seed.split(" ")[0]} npx tsx test/fuzz/${suite}.test.ts\n` +
      `${rule}\n${String((error as Error)?.message ?? error).slice(0, 4000)}`,
  );
}
