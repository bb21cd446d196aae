/**
 * `petstore export`, `petstore import` and `petstore migrate`: the subcommands that move a store's
 * data (docs/STORAGE.md, "Moving data"). Exit codes: 0 done; 2 bad input or a store that cannot take
 * it, nothing written; 1 a storage failure mid-way (running the same command again finishes it);
 * 130 stopped by Ctrl-C (likewise). Progress and messages go to stderr, an export without `--out`
 * to stdout.
 */
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { isPetStoreError, openStorage, StorageConfigError } from "petstore-lib";
import { invalidRecordOf, printable } from "petstore-lib/internal";
import type { InvalidRecordError, PetStorage } from "petstore-lib/storage";
import {
  abandonImport,
  exportLines,
  ImportError,
  type ImportResult,
  importFile,
  VerifyError,
  verifyStores,
} from "petstore-lib/transfer";
import { showProgress } from "./progress.ts";

export const TRANSFER_COMMANDS = ["export", "import", "migrate"] as const;
export type TransferCommand = (typeof TRANSFER_COMMANDS)[number];

export const TRANSFER_USAGE = `Usage: petstore export [--storage URL] [--out FILE] [--skip-invalid] [--quiet]
       petstore import FILE|- [--storage URL] [--merge] [--quiet]
       petstore import --abandon [--storage URL]
       petstore migrate --from URL --to URL [--verify] [--merge] [--skip-invalid] [--quiet]

export   writes the store's pets and idempotency keys as NDJSON (stdout without --out), beside a
         serving store without stopping it; it stops at a record that cannot be read, naming its
         key, unless --skip-invalid (every other record written, the skipped keys named)
import   checks the whole input (a file, or - for standard input), then writes it into the store;
         a store holding other pets is refused unless --merge. Until it is done the store is marked:
         servers refuse creates and /readyz answers 503. Running it again finishes an import that
         was stopped; --abandon undoes it instead
migrate  export piped into import; --verify then compares the two stores page by page
--storage defaults to PETSTORE_STORAGE: sqlite:<path> | redis://… | redis+cluster://… | postgres://…
Exit codes: 0 done; 2 bad input, nothing written; 1 storage failure (run it again to finish); 130 Ctrl-C.`;

/** A command line that cannot work: one line, exit 2. */
class UsageError extends Error {
  override name = "UsageError";
}

/** Lines written per write to the output: fewer, larger writes. */
const CHUNK_CHARS = 64 * 1024;

/** The storage a command names (memory holds nothing outside its server's process). */
async function openNamed(spec: string | undefined, flag: string): Promise<PetStorage> {
  if (spec === undefined || spec === "") {
    throw new UsageError(`which store? give ${flag} URL (or set PETSTORE_STORAGE)`);
  }
  if (spec === "memory") {
    throw new UsageError(
      `a memory store lives only inside its server's process: give ${flag} sqlite:<path>, redis://…, redis+cluster://… or postgres://… (the test kit imports into memory: createTestStore({ pets: "<file>" }))`,
    );
  }
  return openStorage(spec);
}

/** Writes an export of `storage` to `out`, in chunks, waiting when the output is full. */
async function writeExport(
  storage: PetStorage,
  out: NodeJS.WritableStream,
  progress: (done: number, total: number) => void,
  signal: AbortSignal,
  onInvalid: ((error: InvalidRecordError) => void) | undefined,
): Promise<{ pets: number; keys: number }> {
  let chunk = "";
  let header = { pets: 0, keys: 0 };
  // A closed output (stdout piped into a command that ended) fails the export, never the process.
  let failed: unknown;
  const onError = (error: unknown) => {
    failed ??= error;
  };
  out.on("error", onError);
  const flush = async () => {
    if (chunk === "") return;
    const full = !out.write(chunk);
    chunk = "";
    if (failed !== undefined) throw failed;
    if (full) await once(out, "drain", { signal }); // rejects on an error meanwhile
  };
  for await (const [record, line] of exportLines(storage, { onProgress: progress, signal, onInvalid })) {
    if ("format" in record) header = { pets: record.pets, keys: record.keys };
    chunk += line;
    if (chunk.length >= CHUNK_CHARS) await flush();
  }
  await flush();
  if (failed !== undefined) throw failed;
  return header;
}

/** Ends `stream` and resolves once its data is written (rejects on a write error). */
function finish(
  stream: NodeJS.WritableStream & { once(event: string, listener: (...args: unknown[]) => void): unknown },
) {
  return new Promise<void>((resolve, reject) => {
    stream.once("error", reject);
    stream.end(() => resolve());
  });
}

/** The records left out with --skip-invalid, collected for the closing lines. */
function skippedRecords() {
  const keys: string[] = [];
  return {
    onInvalid: (error: InvalidRecordError) => keys.push(error.key),
    /** The closing line: how many, and which keys (the first ten). */
    line(): string | undefined {
      if (keys.length === 0) return undefined;
      const shown = keys.slice(0, 10).map((key) => printable(key));
      const more = keys.length > 10 ? ` and ${keys.length - 10} more` : "";
      return `skipped ${keys.length} invalid record${keys.length === 1 ? "" : "s"} (not written): ${shown.join(", ")}${more}`;
    },
  };
}

/** `petstore export`: to `--out` (written under a temporary name, renamed when whole) or stdout. */
async function exportCommand(
  spec: string | undefined,
  outPath: string | undefined,
  { quiet, skipInvalid }: { quiet: boolean; skipInvalid: boolean },
  signal: AbortSignal,
) {
  const skipped = skipInvalid ? skippedRecords() : undefined;
  const storage = await openNamed(spec, "--storage");
  const started = Date.now();
  const temporary = outPath === undefined ? undefined : `${outPath}.${process.pid}.partial`;
  try {
    const out = temporary === undefined ? process.stdout : createWriteStream(temporary, { flags: "wx" });
    const opened = temporary === undefined ? undefined : (once(out, "open") as Promise<unknown>);
    await opened;
    let shown: ReturnType<typeof showProgress> | undefined;
    const counts = await writeExport(
      storage,
      out,
      (done, total) => {
        // Lines written to a terminal would be drawn over by the progress line: none then.
        shown ??= showProgress("export", "pets and keys", total, {
          quiet: quiet || (outPath === undefined && process.stdout.isTTY === true),
        });
        shown.update(done);
      },
      signal,
      skipped?.onInvalid,
    );
    shown?.end();
    if (temporary !== undefined && outPath !== undefined) {
      await finish(out as ReturnType<typeof createWriteStream>);
      await rename(temporary, outPath);
    }
    if (!quiet) {
      process.stderr.write(
        `exported ${counts.pets} pets and ${counts.keys} keys${outPath === undefined ? "" : ` to ${printable(outPath)}`} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
      );
    }
    const skippedLine = skipped?.line();
    if (skippedLine !== undefined) process.stderr.write(`petstore export: ${skippedLine}\n`);
  } catch (error) {
    if (temporary !== undefined) await rm(temporary, { force: true });
    throw error;
  } finally {
    await storage.close();
  }
}

/** The summary line of an import. */
function imported(result: ImportResult, seconds: number): string {
  const present = result.petsPresent > 0 ? ` (${result.petsPresent} already there)` : "";
  const expired = result.keysExpired > 0 ? ` (${result.keysExpired} expired, not written)` : "";
  const keysPresent = result.keys - result.keysWritten - result.keysExpired;
  const keysThere = keysPresent > 0 ? ` (${keysPresent} already there)` : "";
  return `imported ${result.petsWritten} pets${present} and ${result.keysWritten} keys${keysThere}${expired} in ${seconds.toFixed(1)} s; the next id is ${result.nextId} or above`;
}

/** What a command has done so far, for the line of one that stopped: whether it marked a store. */
interface Progress {
  marked: boolean;
}

/** Imports `path` into `storage`, with progress; the store stays open. */
async function importInto(
  storage: PetStorage,
  path: string,
  { merge, quiet }: { merge: boolean; quiet: boolean },
  progress: Progress,
  signal: AbortSignal,
) {
  const started = Date.now();
  let shown: ReturnType<typeof showProgress> | undefined;
  try {
    const result = await importFile(storage, path, {
      merge,
      signal,
      onMarked: () => {
        progress.marked = true;
      },
      onProgress(done, total) {
        shown ??= showProgress("import", "pets and keys", total, { quiet });
        shown.update(done);
      },
    });
    shown?.end();
    if (!quiet) process.stderr.write(`${imported(result, (Date.now() - started) / 1000)}\n`);
  } catch (error) {
    shown?.end();
    throw error;
  }
}

/** `petstore import FILE`. */
async function importCommand(
  spec: string | undefined,
  path: string,
  how: { merge: boolean; quiet: boolean },
  progress: Progress,
  signal: AbortSignal,
) {
  const storage = await openNamed(spec, "--storage");
  try {
    await importInto(storage, path, how, progress, signal);
  } finally {
    await storage.close();
  }
}

/** `petstore import --abandon`: the unfinished import undone, by its mark. */
async function abandonCommand(spec: string | undefined, quiet: boolean) {
  const storage = await openNamed(spec, "--storage");
  try {
    const undone = await abandonImport(storage);
    if (quiet) return;
    if (undone === undefined)
      process.stderr.write("petstore import: no unfinished import in this store: nothing to undo\n");
    else {
      process.stderr.write(
        `abandoned the import started ${undone.mark.startedAt}: removed ${undone.pets} pets and ${undone.keys} keys it wrote; the next id is ${undone.mark.lastId + 1} again\n`,
      );
    }
  } finally {
    await storage.close();
  }
}

/** `petstore migrate`: an export to a temporary file, imported, then compared when asked. */
async function migrateCommand(
  from: string | undefined,
  to: string | undefined,
  { verify, merge, quiet, skipInvalid }: { verify: boolean; merge: boolean; quiet: boolean; skipInvalid: boolean },
  progress: Progress,
  signal: AbortSignal,
) {
  const skipped = skipInvalid ? skippedRecords() : undefined;
  if (from === undefined || to === undefined) throw new UsageError("migrate needs --from URL and --to URL");
  if (from === to) throw new UsageError("--from and --to name the same store");
  const source = await openNamed(from, "--from");
  let target: PetStorage | undefined;
  const folder = await mkdtemp(join(tmpdir(), "petstore-migrate-"));
  try {
    target = await openNamed(to, "--to");
    const file = join(folder, "export.ndjson");
    const out = createWriteStream(file);
    let shown: ReturnType<typeof showProgress> | undefined;
    await writeExport(
      source,
      out,
      (done, total) => {
        shown ??= showProgress("migrate: export", "pets and keys", total, { quiet });
        shown.update(done);
      },
      signal,
      skipped?.onInvalid,
    );
    shown?.end();
    await finish(out);
    await importInto(target, file, { merge, quiet }, progress, signal);
    const skippedLine = skipped?.line();
    if (skippedLine !== undefined) process.stderr.write(`petstore migrate: ${skippedLine}\n`);
    if (verify) {
      const { pets, keys } = await verifyStores(source, target, { skipInvalid });
      process.stdout.write(`verified ${pets} pets, ${keys} keys\n`);
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
    await Promise.all([source.close(), target?.close()]);
  }
}

/** The first line of what failed: the bad record with its key, or the storage's own error behind the store's words. */
function describe(error: unknown): string {
  const record = invalidRecordOf(error);
  if (record !== undefined) {
    return `the record ${printable(record.key)} (${record.backend}) is invalid: ${record.reason}; petstore export --skip-invalid writes every other record`;
  }
  const cause = isPetStoreError(error, "storage_unavailable") && error.cause !== undefined ? error.cause : error;
  return printable((cause instanceof Error ? cause.message : String(cause)).split("\n")[0] ?? "");
}

/** What to do about an import that stopped after it marked its store. */
const UNFINISHED =
  "the import is unfinished (servers of the store refuse creates until it is done): run the same command again to finish it, or undo it with petstore import --abandon";

/** The exit code and line of a command that failed. */
function failure(
  command: TransferCommand,
  error: unknown,
  signal: AbortSignal,
  progress: Progress,
): { code: number; line: string } {
  const message = describe(error);
  if (signal.aborted) {
    const again = command === "export" || !progress.marked ? "nothing was written" : UNFINISHED;
    return { code: 130, line: `stopped (Ctrl-C): ${again}` };
  }
  if (error instanceof UsageError || error instanceof ImportError || error instanceof StorageConfigError) {
    return { code: 2, line: message };
  }
  if (error instanceof VerifyError) return { code: 1, line: `verify failed: ${message}` };
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === "ENOENT" || code === "EACCES" || code === "EEXIST" || code === "EISDIR")
    return { code: 2, line: message };
  const again = command === "export" ? "" : progress.marked ? `; ${UNFINISHED}` : "; nothing was written";
  return { code: 1, line: `storage failed: ${message}${again}` };
}

/**
 * Runs `petstore <command> …argv`: resolves the exit code, having printed one line on stderr when
 * it failed. Ctrl-C stops between two batches; a second one exits at once.
 */
export async function runTransfer(
  command: TransferCommand,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const controller = new AbortController();
  const progress: Progress = { marked: false };
  let stops = 0;
  const onSignal = () => {
    if (++stops > 1) process.exit(130);
    controller.abort(new Error("stopped"));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        storage: { type: "string" },
        out: { type: "string" },
        merge: { type: "boolean" },
        from: { type: "string" },
        to: { type: "string" },
        verify: { type: "boolean" },
        abandon: { type: "boolean" },
        "skip-invalid": { type: "boolean" },
        quiet: { type: "boolean", short: "q" },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) {
      process.stdout.write(`${TRANSFER_USAGE}\n`);
      return 0;
    }
    const allowed: Record<TransferCommand, string[]> = {
      export: ["storage", "out", "skip-invalid", "quiet"],
      import: ["storage", "merge", "abandon", "quiet"],
      migrate: ["from", "to", "verify", "merge", "skip-invalid", "quiet"],
    };
    const wrong = Object.keys(values).find((name) => !allowed[command].includes(name));
    if (wrong !== undefined) throw new UsageError(`${command} takes no --${wrong}; see petstore ${command} --help`);
    const quiet = values.quiet === true;
    const skipInvalid = values["skip-invalid"] === true;
    const storage = values.storage ?? env.PETSTORE_STORAGE;
    if (command === "import" && values.abandon === true) {
      if (positionals.length > 0 || values.merge === true)
        throw new UsageError(
          "import --abandon takes no file and no --merge: petstore import --abandon [--storage URL]",
        );
      await abandonCommand(storage, quiet);
    } else if (command === "import") {
      if (positionals.length !== 1)
        throw new UsageError(
          "import needs one export file (or - for standard input): petstore import FILE [--storage URL] [--merge]",
        );
      const how = { merge: values.merge === true, quiet };
      await importCommand(storage, positionals[0] as string, how, progress, controller.signal);
    } else {
      if (positionals.length > 0)
        throw new UsageError(
          `unexpected argument '${printable(String(positionals[0]))}'; see petstore ${command} --help`,
        );
      if (command === "export") await exportCommand(storage, values.out, { quiet, skipInvalid }, controller.signal);
      else {
        const how = { verify: values.verify === true, merge: values.merge === true, quiet, skipInvalid };
        await migrateCommand(values.from, values.to, how, progress, controller.signal);
      }
    }
    return 0;
  } catch (error) {
    const wrongArgs = (error as { code?: string })?.code?.startsWith("ERR_PARSE_ARGS") === true;
    const { code, line } = wrongArgs
      ? { code: 2, line: `${(error as Error).message}; see petstore ${command} --help` }
      : failure(command, error, controller.signal, progress);
    process.stderr.write(`petstore ${command}: ${line}\n`);
    return code;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
