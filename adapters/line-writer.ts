/**
 * A buffered writer of log lines to a file descriptor (stdout for the standalone server).
 * Lines are appended to one string and written in chunks of 16 KiB, or 200 ms after the first
 * line of a quiet spell: a write per request would cost as much as the request itself.
 * `end()` writes what is left, in order; lines still buffered when the process exits are
 * written synchronously then, so a crash-free exit never drops a line.
 */
import { write, writeSync } from "node:fs";

const CHUNK = 16 * 1024;
const DELAY_MS = 200;

export class LineWriter {
  private buffered = "";
  private pending: Buffer | undefined; // bytes handed to the kernel and not yet confirmed
  private timer: NodeJS.Timeout | undefined;
  private idle: (() => void)[] = [];
  private readonly onExit = () => this.flushSync();

  constructor(private readonly fd: number) {
    process.once("exit", this.onExit);
  }

  /** Queues one line (it must end with "\n"). */
  write(line: string): boolean {
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
    if (this.pending !== undefined) return; // the write in flight starts the next one
    if (this.buffered === "") {
      this.settle();
      return;
    }
    this.send(Buffer.from(this.buffered));
    this.buffered = "";
  }

  private send(bytes: Buffer): void {
    this.pending = bytes;
    write(this.fd, bytes, 0, bytes.length, null, (error, written) => {
      this.pending = undefined;
      if (error && (error as NodeJS.ErrnoException).code === "EAGAIN") {
        setTimeout(() => this.send(bytes), 10).unref();
        this.pending = bytes;
        return;
      }
      // Any other error (a closed stdout): the lines are dropped, logging must not stop the server.
      if (!error && written < bytes.length) return this.send(bytes.subarray(written));
      this.flush();
    });
  }

  private settle(): void {
    for (const resolve of this.idle.splice(0)) resolve();
  }

  /** Resolves once every queued line is written. */
  end(): Promise<void> {
    return new Promise((resolve) => {
      this.idle.push(resolve);
      this.flush();
    });
  }

  /** Writes everything now (at process exit, where nothing asynchronous runs any more). */
  flushSync(): void {
    process.removeListener("exit", this.onExit);
    clearTimeout(this.timer);
    let rest = Buffer.concat([this.pending ?? Buffer.alloc(0), Buffer.from(this.buffered)]);
    this.pending = undefined;
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
