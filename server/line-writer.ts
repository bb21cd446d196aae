/**
 * A buffered writer of log lines to a file descriptor (stdout for the standalone server): lines
 * are written in chunks of 16 KiB or 200 ms after the first line of a quiet spell, since a write
 * per request would cost as much as the request. A file or terminal is written synchronously, a
 * pipe or socket asynchronously (a stalled reader never stalls the server; at most 64 MiB wait).
 * Lines still buffered at exit are written then; no exit listener is held while nothing waits.
 */
import { fstatSync, write, writeSync } from "node:fs";

const CHUNK = 16 * 1024;
const DELAY_MS = 200;
const MAX_WAITING = 64 * 1024 * 1024;
/** POSIX's PIPE_BUF on Linux: a write to a pipe of at most this many bytes is never split. */
const ATOMIC_BYTES = 4096;

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
  private buffered = "";
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
    if (this.buffered.length > MAX_WAITING) return true; // the reader is gone: logging must not stop the server
    if (!this.hooked) this.hook(); // lines wait from now on: they must reach the exit
    this.buffered += line;
    if (this.buffered.length >= CHUNK) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), DELAY_MS);
      this.timer.unref();
    }
    return true;
  }

  /** Starts writing what is buffered (pino calls this as `logger.flush(cb)`); `done` once written. */
  flush(done?: (error?: Error) => void): void {
    if (done) this.idle.push(() => done());
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.sync) {
      this.flushSync(false);
      this.settle();
      return;
    }
    if (this.inFlight !== undefined || this.refused !== undefined) return; // that write starts the next one
    if (this.buffered === "") {
      this.settle();
      return;
    }
    this.send(Buffer.from(this.take()));
  }

  /** What the next write takes: everything, or (atomicLines) whole lines of at most 4 KiB. */
  private take(): string {
    const all = this.buffered;
    if (!this.atomicLines || Buffer.byteLength(all) <= ATOMIC_BYTES) {
      this.buffered = "";
      return all;
    }
    // In characters: 4096 when they are all one byte, else 4096 / 3 (UTF-8 takes at most 3 bytes a UTF-16 unit).
    const ascii = Buffer.byteLength(all.slice(0, ATOMIC_BYTES)) === ATOMIC_BYTES;
    const limit = ascii ? ATOMIC_BYTES : Math.floor(ATOMIC_BYTES / 3);
    let cut = all.lastIndexOf("\n", limit - 1) + 1;
    if (cut === 0) cut = all.indexOf("\n") + 1 || all.length; // a line longer than that: written alone
    this.buffered = all.slice(cut);
    return all.slice(0, cut);
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
    if (this.hooked && this.inFlight === undefined && this.refused === undefined && this.buffered === "") this.unhook();
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
   * Writes everything now: at process exit (where nothing asynchronous runs any more, `last`),
   * and for every chunk when the descriptor is a file or a terminal. At exit, bytes in flight are
   * taken as written: the write has almost always happened and only its callback is still to
   * come, so writing them again would repeat lines.
   */
  flushSync(last = true): void {
    if (last) {
      this.unhook();
      clearTimeout(this.retry);
      this.inFlight = undefined;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.inFlight !== undefined || (this.refused === undefined && this.buffered === "")) return;
    let rest =
      this.refused === undefined
        ? Buffer.from(this.buffered)
        : Buffer.concat([this.refused, Buffer.from(this.buffered)]);
    this.refused = undefined;
    this.buffered = "";
    for (let tries = 0; rest.length > 0 && tries < 1000; tries++) {
      try {
        rest = rest.subarray(writeSync(this.fd, rest));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return;
      }
    }
  }
}
