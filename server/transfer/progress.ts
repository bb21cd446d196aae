/**
 * The progress of a long command on stderr: on a terminal one line rewritten in place (done, total,
 * rate, time left), at most ten times a second; otherwise a plain line about every 10 s, which a log
 * keeps readable; nothing when quiet. A line with `\r` and "erase to the end of the line" is all a
 * terminal needs here, so no library draws it.
 */

export interface ProgressOptions {
  quiet?: boolean;
  /** Where the lines go (default stderr); a terminal when its `isTTY` is true. */
  stream?: { write(text: string): unknown; isTTY?: boolean };
  /** Plain lines this often when not on a terminal (ms, default 10,000). */
  everyMs?: number;
  /** The clock (ms), for tests. */
  now?: () => number;
}

export interface Progress {
  /** `done` of the total are done. */
  update(done: number): void;
  /** The work ended (or stopped): a terminal's line is ended. */
  end(): void;
}

const TERMINAL_EVERY_MS = 100;
const count = (n: number) => n.toLocaleString("en-US");

/** A duration as people read it: `45 s`, `3 min 20 s`, `2 h 5 min`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/**
 * The line for `done` of `total` after `elapsedMs`.
 * @example progressLine("import", "pets and keys", 45000, 110000, 10000) // "import: 45,000 of 110,000 pets and keys (40%), 4,500/s, 14 s left"
 */
export function progressLine(label: string, unit: string, done: number, total: number, elapsedMs: number): string {
  const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
  const rate = elapsedMs > 0 ? done / (elapsedMs / 1000) : 0;
  const left = rate > 0 && done < total ? `, ${formatDuration((total - done) / rate)} left` : "";
  return `${label}: ${count(done)} of ${count(total)} ${unit} (${percent}%)${rate > 0 ? `, ${count(Math.round(rate))}/s` : ""}${left}`;
}

/** Progress of `total` `unit` (e.g. "pets and keys") under `label`. */
export function showProgress(label: string, unit: string, total: number, options: ProgressOptions = {}): Progress {
  const { quiet = false, stream = process.stderr, everyMs = 10_000, now = Date.now } = options;
  if (quiet) return { update() {}, end() {} };
  const started = now();
  const terminal = stream.isTTY === true;
  let shownAt = started;
  let last = 0;
  let drawn = false;
  const draw = (done: number) => {
    const line = progressLine(label, unit, done, total, now() - started);
    stream.write(terminal ? `\r${line}\x1b[K` : `${line}\n`);
    drawn = true;
  };
  return {
    update(done: number) {
      last = done;
      const at = now();
      if (at - shownAt < (terminal ? TERMINAL_EVERY_MS : everyMs)) return;
      shownAt = at;
      draw(done);
    },
    end() {
      if (terminal) {
        if (drawn || last > 0) draw(last);
        if (drawn) stream.write("\n");
      }
    },
  };
}
