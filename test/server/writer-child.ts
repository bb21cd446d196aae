/**
 * Child of line-writer.test.ts: writes `count` numbered lines (plain, or "mixed": see lines.ts) to stdout through a LineWriter
 * (with atomicLines when argv[4] is "atomic"),
 * says on stderr how long the writes took (they must not wait for the reader), then ends it; with
 * "exit" as argv[5], exits as soon as the last write is under way instead (a forced exit).
 */
import { LineWriter } from "../../server/line-writer.ts";
import { line } from "../support/lines.ts";

const count = Number(process.argv[2] ?? 1000);
const mixed = process.argv[3] === "mixed";
const writer = new LineWriter(1, process.argv[4] === "atomic");
const started = performance.now();
for (let i = 0; i < count; i++) writer.write(line(i, mixed));
process.stderr.write(`written ${Math.round(performance.now() - started)}\n`);
if (process.argv[5] === "exit") {
  void writer.end();
  process.exit(1);
}
await writer.end();
process.stderr.write("ended\n");
