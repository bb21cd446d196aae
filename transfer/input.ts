/**
 * An import's input, read once per pass (contract 1.4). A regular file is read as it is checked,
 * and again for each write pass once its size and modification time are found unchanged; anything
 * else (`-` for standard input, a pipe, a FIFO, a character device) is copied to a temporary file of
 * this process's own as it is checked, and the write passes read that copy. Every pass digests the
 * bytes it read: a write pass whose bytes are not the checked ones fails. Lines longer than
 * `MAX_LINE_BYTES` are refused as they come (no export line is near it). Each read ends when the
 * signal aborts, a FIFO still waiting for its writer included.
 */
import { createHash, type Hash } from "node:crypto";
import { constants, createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { mkdtemp, open, rm, stat } from "node:fs/promises";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { printable } from "../lib/printable.ts";
import { ImportError } from "./format.ts";

/** The longest line taken: an export's lines are a few hundred bytes. */
export const MAX_LINE_BYTES = 64 * 1024;

/** One line of the input, without its line feed, and its number (from 1). */
export interface Line {
  text: string;
  number: number;
}

/** The bytes of a stream as they come, the stream destroyed (and the read ended) when `signal` aborts. */
async function* chunksOf(stream: Readable, signal: AbortSignal | undefined): AsyncGenerator<Buffer> {
  const stop = () => stream.destroy();
  signal?.addEventListener("abort", stop, { once: true });
  try {
    for await (const chunk of stream) {
      signal?.throwIfAborted();
      yield typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    }
    signal?.throwIfAborted();
  } finally {
    signal?.removeEventListener("abort", stop);
  }
}

/**
 * The lines of `chunks`, each at most `MAX_LINE_BYTES` (`where(n)` names line n in the refusal), with
 * every byte handed to `take` first.
 */
export async function* linesOf(
  chunks: AsyncIterable<Buffer>,
  where: (line: number) => string,
  take: (bytes: Buffer) => void | Promise<void>,
): AsyncGenerator<Line> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let number = 0;
  const tooLong = () =>
    new ImportError(`${where(number + 1)}: longer than ${MAX_LINE_BYTES} bytes: not a line of a petstore export`);
  for await (const chunk of chunks) {
    await take(chunk);
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      if (pendingBytes + end - start > MAX_LINE_BYTES) throw tooLong();
      const piece = chunk.subarray(start, end);
      const bytes = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
      pending = [];
      pendingBytes = 0;
      start = end + 1;
      yield { text: bytes.toString("utf8"), number: ++number };
    }
    if (start < chunk.length) {
      pendingBytes += chunk.length - start;
      if (pendingBytes > MAX_LINE_BYTES) throw tooLong();
      pending.push(chunk.subarray(start));
    }
  }
  if (pendingBytes > 0) yield { text: Buffer.concat(pending).toString("utf8"), number: ++number };
}

/**
 * A FIFO opened for reading, as a socket (its reads never hold one of the thread pool's threads).
 * The open itself waits for a writer in the thread pool: when `signal` aborts first, the FIFO is
 * opened for writing once and closed, which ends that wait, and the read rejects.
 */
async function openFifo(path: string, signal: AbortSignal | undefined): Promise<Readable> {
  const unblock = () => {
    open(path, constants.O_WRONLY | constants.O_NONBLOCK).then(
      (handle) => handle.close(),
      () => {},
    );
  };
  signal?.addEventListener("abort", unblock, { once: true });
  try {
    const handle = await open(path, constants.O_RDONLY);
    if (signal?.aborted) {
      await handle.close();
      signal.throwIfAborted();
    }
    return new Socket({ fd: handle.fd, readable: true, writable: false });
  } finally {
    signal?.removeEventListener("abort", unblock);
  }
}

/** What a regular file was when it was checked: a write pass reads it only while it still is. */
interface FileState {
  size: number;
  mtimeMs: number;
  ino: number;
}

/** The input named on the command line (`-`: standard input), checked once by `check` as it is read. */
export interface CheckedSource {
  /** SHA-256 (hex) of every byte checked. */
  digest: string;
  /** The input's lines again, for a write pass; rejects when they are not the checked bytes. */
  lines(signal: AbortSignal | undefined): AsyncGenerator<Line>;
  /** Removes the temporary copy, if one was made. */
  close(): Promise<void>;
}

/**
 * Reads the input at `path` once, handing each line to `check` (which throws to refuse it); a
 * non-regular input is copied meanwhile. Resolves how to read it again.
 */
export async function readSource(
  path: string,
  check: (line: Line) => void,
  signal: AbortSignal | undefined,
): Promise<CheckedSource> {
  const shown = path === "-" ? "standard input" : printable(path);
  const where = (line: number) => `${shown} line ${line}`;
  // This process's own standard input whatever it is (a socket, which cannot be opened by its name).
  const stdin = path === "-" || path === "/dev/stdin";
  const info = stdin ? undefined : await stat(path);
  const regular = info?.isFile() === true;
  let stream: Readable;
  if (stdin) stream = process.stdin;
  else if (info?.isFIFO() === true) stream = await openFifo(path, signal);
  else stream = createReadStream(path);
  const digest = createHash("sha256");
  let copyDir: string | undefined;
  let copy: WriteStream | undefined;
  if (!regular) {
    copyDir = await mkdtemp(join(tmpdir(), "petstore-import-"));
    copy = createWriteStream(join(copyDir, "input.ndjson"), { mode: 0o600 });
  }
  const close = async () => {
    copy?.destroy();
    if (copyDir !== undefined) await rm(copyDir, { recursive: true, force: true });
  };
  const keep = (bytes: Buffer): void | Promise<void> => {
    digest.update(bytes);
    if (copy !== undefined && !copy.write(bytes)) {
      return new Promise((resolve, reject) => {
        (copy as WriteStream).once("drain", resolve).once("error", reject);
      });
    }
  };
  try {
    for await (const line of linesOf(chunksOf(stream, signal), where, keep)) check(line);
    if (copy !== undefined)
      await new Promise<void>((resolve, reject) => (copy as WriteStream).end(resolve).once("error", reject));
  } catch (error) {
    if (!stdin) stream.destroy();
    await close();
    throw error;
  }
  const checked = digest.digest("hex");
  const readFrom = copyDir === undefined ? path : join(copyDir, "input.ndjson");
  const state: FileState | undefined =
    regular && info ? { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino } : undefined;
  return {
    digest: checked,
    async *lines(again) {
      if (state !== undefined) {
        const now = await stat(path);
        if (now.size !== state.size || now.mtimeMs !== state.mtimeMs || now.ino !== state.ino) {
          throw new ImportError(
            `${shown}: the file changed during the import (run it again on a file that stays as it is)`,
          );
        }
      }
      const read = createHash("sha256");
      const take = (bytes: Buffer) => {
        read.update(bytes);
      };
      yield* linesOf(chunksOf(createReadStream(readFrom), again), where, take);
      if (read.digest("hex") !== checked) {
        throw new ImportError(`${shown}: the file changed during the import (its bytes are not the ones checked)`);
      }
    },
    close,
  };
}

/** A digest of the records of an import given in code, as their lines would read. */
export function digestOf(lines: readonly string[]): string {
  const hash: Hash = createHash("sha256");
  for (const line of lines) hash.update(line);
  return hash.digest("hex");
}
