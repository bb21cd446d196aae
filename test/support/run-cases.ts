/** Runs conformance cases one after another against one target, for suites that test them as one. */
import type { ConformanceCase, ConformanceTarget } from "../../conformance/index.ts";

/** Runs `cases` in order on `target`; the first failure is thrown with its case's name in front. */
export async function runEachCase(cases: readonly ConformanceCase[], target: ConformanceTarget): Promise<void> {
  for (const c of cases) {
    try {
      await c.run(target);
    } catch (error) {
      (error as Error).message = `${c.name}: ${(error as Error).message}`;
      throw error;
    }
  }
}
