/**
 * What `npm test` says last: whether the run was complete. A suite that cannot run here (no Redis,
 * Postgres, Chromium, promtool or Node.js version) prints a SKIPPED line instead of failing, unless
 * CI=true; a local run that printed any is not the whole suite, and its last line says so plainly.
 */

/** A suite's SKIPPED line (`*** SKIPPED: redis outage tests: … ***`): what was skipped, and why. */
const SKIPPED = /\bSKIPPED: (.*?)(?: \*\*\*)?\s*$/;

/** What a SKIPPED line skipped ("redis outage tests: redis-server is not installed"), or undefined. */
export function skippedBy(line: string): string | undefined {
  return SKIPPED.exec(line)?.[1];
}

/**
 * The run's last line, from what the suites skipped.
 * @example completeness([]) // "test/run.ts: complete: no suite was skipped"
 */
export function completeness(skipped: readonly string[]): string {
  if (skipped.length === 0) return "test/run.ts: complete: no suite was skipped";
  const whats = [...new Set(skipped.map((s) => s.split(":")[0]?.trim()))];
  const named = whats.length > 3 ? `${whats.slice(0, 3).join("; ")}; …` : whats.join("; ");
  return (
    `test/run.ts: INCOMPLETE: ${skipped.length} skipped (${named}), each named above; ` +
    "with CI=true a missing service, browser or runtime fails instead"
  );
}
