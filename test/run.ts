/**
 * `npm test`: every test/**\/*.test.ts (or those matching argv[2]) in one uvu run, then a
 * guaranteed end. uvu waits for the event loop to drain; a handle some test left open would
 * otherwise hang CI after the summary, so it is named on stderr and the process exits with
 * uvu's own exit code.
 */
import { parse } from "uvu/parse";
import { run } from "uvu/run";

const pattern = new RegExp(process.argv[2] ?? "\\.test\\.ts$");
const { suites } = await parse("test", pattern, {});
await run(suites, { bail: false });

setTimeout(() => {
  const open = process.getActiveResourcesInfo().filter((r) => r !== "Timeout");
  process.stderr.write(`test/run.ts: still open after the summary (${open.join(", ")}): exiting\n`);
  process.exit();
}, 5000).unref();
