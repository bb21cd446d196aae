/**
 * A buffered writer of log lines to a file descriptor (stdout for the standalone server): lines
 * are written in chunks of 16 KiB or 200 ms after the first line of a quiet spell, since a write
 * per request would cost as much as the request. A file or terminal is written synchronously, a
 * pipe or socket asynchronously (a stalled reader never stalls the server; at most 64 MiB wait).
 * Lines still buffered at exit are written then; no exit listener is held while nothing waits.
 *
 * Lines wait as UTF-8 bytes, not as a string: a line is encoded while it is new (its text then
 * dies young instead of waiting, and being copied by the garbage collector, until the chunk is
 * written).
 */
import { fstatSync, write, writeSync } from "node:fs";

const CHUNK = 16 * 1024;
const DELAY_MS = 200;
const MAX_WAITING = 64 * 1024 * 1024;
/** POSIX's PIPE_BUF on Linux: a write to a pipe of at most this many bytes is never split. */
const ATOMIC_BYTES = 4096;
/** The buffer's size to begin with, and what it goes back to once a burst is written. */
const INITIAL_BYTES = 4 * CHUNK;
const NEWLINE = 0x0a;

/** True when writes to `fd` may block on a reader (a pipe or a socket), or when it is unknown. */
function mayBlock(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return !(stat.isFile() || stat.isCharacterDevice());
  } catch {
    return true;
  }
}

export class LineWriter {
  /** The lines waiting, as UTF-8: `pending[0, used)`. */
  private pending = Buffer.allocUnsafe(INITIAL_BYTES);
  private used = 0;
  private inFlight: Buffer | undefined; // bytes handed to an asynchronous write, not yet confirmed
  private refused: Buffer | undefined; // bytes a write refused (EAGAIN: the reader is slow), to send again
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined; // sends `refused` again
  private idle: (() => void)[] = [];
  private readonly sync: boolean;
  private readonly onExit = () => this.flushSync();
  private hooked = false; // the exit listener is registered

  /**
   * `atomicLines`: several processes write to the same descriptor (the workers of a cluster), so
   * each write is whole lines of at most 4 KiB, which a pipe never interleaves with another's.
   */
  constructor(
    private readonly fd: number,
    private readonly atomicLines = false,
  ) {
    this.sync = !mayBlock(fd);
  }

  private hook(): void {
    this.hooked = true;
    process.once("exit", this.onExit);
  }

  private unhook(): void {
    this.hooked = false;
    process.removeListener("exit", this.onExit);
  }

  /** Queues one line (it must end with "\n"). */
  write(line: string): boolean {
    // A UTF-16 unit is at most 3 bytes of UTF-8.
    const at = this.reserve(line.length * 3);
    if (at >= 0) this.commit(at + this.pending.write(line, at));
    return true;
  }

  /**
   * Room for a line of at most `max` bytes: the offset in `pending` to write it at, then `commit`
   * its end. -1 when the line is to be dropped (64 MiB wait already: the reader is gone, and
   * logging must not stop the server).
   */
  private reserve(max: number): number {
    if (this.used > MAX_WAITING) return -1;
    if (this.pending.length - this.used < max) this.grow(max);
    return this.used;
  }

  /** The line reserved is written up to `end` (exclusive); it goes out with the next chunk. */
  private commit(end: number): void {
    if (!this.hooked) this.hook(); // lines wait from now on: they must reach the exit
    this.used = end;
    if (end >= CHUNK) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), DELAY_MS);
      this.timer.unref();
    }
  }

  private grow(max: number): void {
    let size = this.pending.length * 2;
    while (size - this.used < max) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.pending.copy(next, 0, 0, this.used);
    this.pending = next;
  }

  /** Starts writing what is buffered (pino calls this as `logger.flush(cb)`); `done` once written. */
  flush(done?: (error?: Error) => void): void {
    if (done) this.idle.push(() => done());
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.sync) {
      this.writeNow();
      this.settle();
      return;
    }
    if (this.inFlight !== undefined || this.refused !== undefined) return; // that write starts the next one
    if (this.used === 0) {
      this.settle();
      return;
    }
    this.send(this.take());
  }

  /** What the next write takes, as bytes of its own: everything, or (atomicLines) whole lines of at most 4 KiB. */
  private take(): Buffer {
    let cut = this.used;
    if (this.atomicLines && cut > ATOMIC_BYTES) {
      cut = this.pending.lastIndexOf(NEWLINE, ATOMIC_BYTES - 1) + 1;
      // A line longer than that: written alone.
      if (cut === 0) cut = this.pending.subarray(0, this.used).indexOf(NEWLINE) + 1 || this.used;
    }
    const taken = Buffer.from(this.pending.subarray(0, cut));
    this.pending.copy(this.pending, 0, cut, this.used);
    this.used -= cut;
    this.shrink();
    return taken;
  }

  /** Back to the first size once empty: a burst that waited for a slow reader does not hold its memory. */
  private shrink(): void {
    if (this.used === 0 && this.pending.length > INITIAL_BYTES) this.pending = Buffer.allocUnsafe(INITIAL_BYTES);
  }

  private send(bytes: Buffer): void {
    this.inFlight = bytes;
    write(this.fd, bytes, 0, bytes.length, null, (error, written) => {
      this.inFlight = undefined;
      if (error && (error as NodeJS.ErrnoException).code === "EAGAIN") {
        this.refused = bytes;
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.refused = undefined;
          this.send(bytes);
        }, 10);
        // Nothing to wait for unless somebody waits in end(): a slow reader must not keep a process alive.
        if (this.idle.length === 0) this.retry.unref();
        return;
      }
      // Any other error (a closed stdout): the lines are dropped, logging must not stop the server.
      if (!error && written < bytes.length) return this.send(bytes.subarray(written));
      this.flush();
    });
  }

  /** Everything is written: nothing to do at exit any more, and whoever waited is told. */
  private settle(): void {
    if (this.hooked && this.inFlight === undefined && this.refused === undefined && this.used === 0) this.unhook();
    for (const resolve of this.idle.splice(0)) resolve();
  }

  /** Resolves once every queued line is written, and then holds no exit listener any more. */
  end(): Promise<void> {
    return new Promise((resolve) => {
      this.idle.push(resolve);
      this.retry?.ref();
      this.flush();
    });
  }

  /**
   * Writes everything now, at process exit (where nothing asynchronous runs any more). Bytes in
   * flight are taken as written: the write has almost always happened and only its callback is
   * still to come, so writing them again would repeat lines.
   */
  flushSync(): void {
    this.unhook();
    clearTimeout(this.retry);
    this.inFlight = undefined;
    this.writeNow();
  }

  /** Writes everything buffered now, unless a write is in flight: at exit, and for every chunk to a file or a terminal. */
  private writeNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.inFlight !== undefined || (this.refused === undefined && this.used === 0)) return;
    // The buffer is written from where it is (no copy), then used again from its start.
    const waiting = this.pending.subarray(0, this.used);
    let rest = this.refused === undefined ? waiting : Buffer.concat([this.refused, waiting]);
    this.refused = undefined;
    for (let tries = 0; rest.length > 0 && tries < 1000; tries++) {
      try {
        rest = rest.subarray(writeSync(this.fd, rest));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EAGAIN") break;
      }
    }
    this.used = 0;
    this.shrink();
  }
}
