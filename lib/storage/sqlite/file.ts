/**
 * SQLite storage, its file: whether the file at the configured path is still the database the store
 * has open (same device and inode) and whole (a whole number of pages). SQLite keeps its descriptors,
 * so a file removed, replaced (another renamed over it) or truncated under a running server would
 * take writes no later process finds: the store answers 503 instead and reports it once per change,
 * with the path, to the store's onError. docs/STORAGE.md, "SQLite: the file under a running server".
 */
import { loadNodeBuiltin } from "../../node-builtin.ts";
import { type Database, queryAll } from "./connection.ts";

type Fs = typeof import("node:fs");

/** How long a read trusts the last verdict: a read of a file just removed loses nothing, a create would. */
const READ_RECHECK_MS = 100;

/** What is wrong with the file at the path; a truncated file stays so (its pages are gone). */
type Problem = "removed" | "replaced" | "truncated" | "unreadable";

export interface FileCheck {
  /** Throws when the file at the path is not the database open, or not whole (before and after each write). */
  verify(): void;
  /** The same, trusting a verdict of the last 100 ms (before each read). */
  verifyRecent(): void;
  /** Adds a receiver of each problem found, told once per change (the store's onError). */
  reportTo(report: (error: Error) => void): void;
}

const NO_FILE: FileCheck = { verify() {}, verifyRecent() {}, reportTo() {} };

/** The sentence of `problem` for the operator, with the path. */
function describe(problem: Problem, path: string, detail: string): string {
  const what = {
    removed: "was removed",
    replaced: "was replaced (another file is at its path)",
    truncated: `was truncated (${detail})`,
    unreadable: `cannot be checked (${detail})`,
  }[problem];
  const until = problem === "truncated" ? "until a restart" : "until the same file is back";
  return `sqlite storage: the database file ${path} ${what} under the running server; answering 503 storage_unavailable ${until}`;
}

/**
 * The check of the file `path` that `db` has open, taken now as the file to keep; a no-op for a
 * database without a file (`:memory:`, a `file:` URI). @example (await checkDatabaseFile(db, "./pets.db")).verify()
 */
export async function checkDatabaseFile(db: Database, path: string): Promise<FileCheck> {
  if (path === ":memory:" || path.startsWith("file:")) return NO_FILE;
  // Loaded here: the core (a browser or Worker bundle included) imports no node:fs.
  const { statSync } = await loadNodeBuiltin<Fs>("node:fs");
  const { resolve } = await loadNodeBuiltin<typeof import("node:path")>("node:path");
  const absolute = resolve(path); // the process may change its folder; SQLite keeps the file it opened
  const opened = statSync(absolute);
  // Fixed once the file is in WAL mode (SQLite changes it only by a VACUUM outside WAL).
  const pageSize = Number((await queryAll(db, "PRAGMA page_size"))[0]?.page_size) || 512;
  const reports: ((error: Error) => void)[] = [];
  let current: { problem: Problem; error: Error } | undefined;
  let checkedAt = Number.NEGATIVE_INFINITY;

  /** What is wrong with the file at the path now, and the detail to say. */
  const inspect = (): [Problem, string] | undefined => {
    if (current?.problem === "truncated") return ["truncated", ""];
    let found: import("node:fs").Stats | undefined;
    try {
      found = statSync(absolute, { throwIfNoEntry: false });
    } catch (error) {
      return ["unreadable", String((error as { code?: unknown }).code ?? error)];
    }
    if (found === undefined) return ["removed", ""];
    if (found.dev !== opened.dev || found.ino !== opened.ino) return ["replaced", ""];
    if (found.size < pageSize || found.size % pageSize !== 0) {
      return ["truncated", `${found.size} bytes, not a whole number of ${pageSize}-byte pages`];
    }
    return undefined;
  };

  const verify = () => {
    checkedAt = performance.now();
    const found = inspect();
    if (found === undefined) {
      current = undefined;
      return;
    }
    if (current?.problem !== found[0]) {
      current = { problem: found[0], error: new Error(describe(found[0], absolute, found[1])) };
      for (const report of reports) {
        try {
          report(current.error);
        } catch {}
      }
    }
    throw current.error;
  };

  return {
    verify,
    verifyRecent() {
      if (performance.now() - checkedAt >= READ_RECHECK_MS) verify();
      else if (current !== undefined) throw current.error;
    },
    reportTo(report) {
      reports.push(report);
    },
  };
}
