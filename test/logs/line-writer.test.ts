/**
 * The log writer: every line arrives, in order, whatever stdout is; a file gets its chunks at
 * once; a pipe whose reader stops reading never stalls the writer (lines wait in memory).
 */
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LineWriter } from "../../adapters/line-writer.ts";

const CHILD = fileURLToPath(new URL("./writer-child.ts", import.meta.url));

function numbered(text: string): number[] {
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as { n: number }).n);
}

test("line writer: to a file, full chunks are written at once and end() writes the rest, in order", async () => {
  const dir = mkdtempSync(join(tmpdir(), "petstore-log-"));
  const file = join(dir, "out.log");
  const fd = openSync(file, "w");
  try {
    const writer = new LineWriter(fd);
    for (let i = 0; i < 300; i++) writer.write(`{"n":${i},"pad":"${"y".repeat(100)}"}\n`);
    // 300 lines of ~120 bytes pass 16 KiB twice: those chunks are on disk before any tick.
    const early = numbered(readFileSync(file, "utf8"));
    assert.ok(early.length >= 200, `expected at least two chunks written at once, found ${early.length} lines`);
    await writer.end();
    assert.equal(numbered(readFileSync(file, "utf8")), [...Array(300).keys()]);
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test("line writer: to a pipe nobody reads, writing does not wait; every line arrives once the reader reads", async () => {
  const count = 20_000; // about 2.4 MB: far more than a pipe holds
  const child = spawn(process.execPath, ["--import", "tsx", CHILD, String(count)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout.pause(); // the reader stops reading
  const deadline = Date.now() + 30_000;
  while (!stderr.includes("written") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.ok(stderr.includes("written"), `the writer is stuck behind the reader: ${stderr}`);
  assert.not.ok(stderr.includes("ended"), "end() waits for the lines to be read");
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  assert.is(code, 0, stderr);
  assert.ok(stderr.includes("ended"));
  assert.equal(numbered(Buffer.concat(chunks).toString("utf8")), [...Array(count).keys()]);
});

test.run();
