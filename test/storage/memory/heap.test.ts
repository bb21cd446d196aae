/** Memory storage holds 1,000,000 pets in under 400 MB of heap (the core issue's rule). */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";

const child = fileURLToPath(new URL("./heap-child.ts", import.meta.url));

test("memory storage: 1,000,000 pets fit in under 400 MB of heap, and are all there", async () => {
  const out = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ["--expose-gc", "--max-old-space-size=600", "--import", "tsx", child, "1000000"],
      { timeout: 120_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
    );
  });
  const { bytes, last, page } = JSON.parse(out) as { bytes: number; last: number; page: number[] };
  assert.ok(bytes > 0, "the heap grew");
  assert.ok(bytes < 400 * 1024 * 1024, `heap growth ${(bytes / 1024 / 1024).toFixed(1)} MiB for 1,000,000 pets`);
  assert.is(last, 1_000_000);
  assert.equal(page, [999_996, 999_997, 999_998, 999_999, 1_000_000]);
});

test.run();
