/**
 * The log writer: every line arrives, in order, whatever stdout is; a file gets its chunks at
 * once; a pipe whose reader stops reading never stalls the writer (lines wait in memory); an exit
 * with a write under way writes no line twice.
 */
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LineWriter } from "../../server/line-writer.ts";
import { line } from "../support/lines.ts";

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
    for (let i = 0; i < 300; i++) writer.write(line(i, false));
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

/** Runs writer-child.ts with its stdout a pipe that is not read until the child says it has written everything. */
async function throughStalledPipe(count: number, mixed: boolean): Promise<string> {
  const args = ["--import", "tsx", CHILD, String(count), ...(mixed ? ["mixed"] : [])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
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
  return Buffer.concat(chunks).toString("utf8");
}

test("line writer: to a pipe nobody reads, writing does not wait; every line arrives once the reader reads", async () => {
  const count = 20_000; // about 2.4 MB: far more than a pipe holds
  assert.equal(numbered(await throughStalledPipe(count, false)), [...Array(count).keys()]);
});

test("line writer: multi-byte lines and lines longer than a chunk arrive whole and in order, to a file and to a pipe", async () => {
  const count = 2000;
  const expected = Array.from({ length: count }, (_, i) => line(i, true)).join("");
  assert.ok(Buffer.byteLength(expected) > 5 * 16 * 1024, "the lines span several chunks");
  assert.ok(expected.includes("😀") && expected.includes("日本"), "the lines hold 3- and 4-byte characters");
  assert.ok((await throughStalledPipe(count, true)) === expected, "through a pipe: the bytes differ");

  const dir = mkdtempSync(join(tmpdir(), "petstore-log-"));
  const file = join(dir, "out.log");
  const fd = openSync(file, "w");
  try {
    const writer = new LineWriter(fd);
    for (let i = 0; i < count; i++) writer.write(line(i, true));
    await writer.end();
    assert.ok(readFileSync(file, "utf8") === expected, "to a file: the bytes differ");
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test("line writer: with atomicLines, 4 processes writing to one stalled pipe never interleave their lines", async () => {
  const count = 5000; // about 600 kB each: the pipe fills, writes wait and resume
  const writer = `"${process.execPath}" --import tsx "${CHILD}" ${count} plain atomic`;
  const child = spawn("sh", ["-c", `${writer} & ${writer} & ${writer} & ${writer} & wait`], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout.pause(); // the reader stops reading until all four have written everything
  const written = () => stderr.split("written").length - 1;
  const deadline = Date.now() + 60_000;
  while (written() < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.is(written(), 4, stderr);
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  child.stdout.resume();
  assert.is(await new Promise<number | null>((resolve) => child.on("exit", resolve)), 0, stderr);
  const seen = numbered(Buffer.concat(chunks).toString("utf8")); // JSON.parse fails on a broken line
  assert.is(seen.length, 4 * count);
  const times = new Map<number, number>();
  for (const n of seen) times.set(n, (times.get(n) ?? 0) + 1);
  assert.ok([...times.values()].every((t) => t === 4) && times.size === count, "each line four times");
});

test("line writer: with atomicLines, multi-byte and long lines still arrive whole and in order", async () => {
  const count = 2000;
  const expected = Array.from({ length: count }, (_, i) => line(i, true)).join("");
  const child = spawn(process.execPath, ["--import", "tsx", CHILD, String(count), "mixed", "atomic"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  assert.is(await new Promise<number | null>((resolve) => child.on("exit", resolve)), 0);
  assert.ok(Buffer.concat(chunks).toString("utf8") === expected, "the bytes differ");
});

test("line writer: a process that exits while a write is under way writes each line once", async () => {
  for (let round = 0; round < 3; round++) {
    const args = ["--import", "tsx", CHILD, "3", "plain", "single", "exit"];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "ignore"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    assert.is(code, 1);
    assert.equal(numbered(Buffer.concat(chunks).toString("utf8")), [0, 1, 2]);
  }
});

test.run();
