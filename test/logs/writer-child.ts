/**
 * Child of line-writer.test.ts: writes `count` numbered lines to stdout through a LineWriter,
 * says on stderr how long the writes took (they must not wait for the reader), then ends it.
 */
import { LineWriter } from "../../adapters/line-writer.ts";

const count = Number(process.argv[2] ?? 1000);
const writer = new LineWriter(1);
const started = performance.now();
for (let i = 0; i < count; i++) writer.write(`{"n":${i},"pad":"${"x".repeat(100)}"}\n`);
process.stderr.write(`written ${Math.round(performance.now() - started)}\n`);
await writer.end();
process.stderr.write("ended\n");
