/**
 * `petstore keys add|list|remove`: the keys file's entries. `add` writes a new key's digest and
 * prints the key once, alone on the last line of its output (a name may hold several keys: a
 * rotation); `list` shows names, public prefixes, scopes and ages, never a key; `remove` takes a
 * key or its prefix and removes that one key. Exit codes: 0 done; 2 a command that cannot work.
 */
import { parseArgs } from "node:util";
import { isPrincipalId } from "petstore-lib/internal";
import type { KeyFileEntry } from "./file.ts";
import {
  digestOf,
  KEY_PREFIX,
  KeysFileError,
  newKey,
  parseScopes,
  prefixOf,
  readKeysFile,
  writeKeysFile,
} from "./file.ts";

export const KEYS_USAGE = `Usage: petstore keys add NAME --scopes pets:read[,pets:write] [--expires-in DAYS] [--file F]
       petstore keys list [--file F]
       petstore keys remove KEY|PREFIX [--file F]

add     writes a new key's SHA-256 digest to the keys file and prints the key once, on the last line
        (a NAME may hold several keys: add a second one to rotate, remove the old one later)
list    each key's name, public prefix, scopes and age; never a key
remove  removes the one key given, or the one key with that prefix
--file defaults to PETSTORE_API_KEYS_FILE. A running server reloads the file on change and on SIGHUP.`;

/** Whole days ago, or hours, of an ISO time. */
function age(createdAt: string, now: number): string {
  const hours = Math.max(0, Math.floor((now - Date.parse(createdAt)) / 3_600_000));
  return hours < 48 ? `${hours}h` : `${Math.floor(hours / 24)}d`;
}

/** What a command prints, and the entries to write when it changes the file. */
interface Outcome {
  lines: string[];
  entries?: KeyFileEntry[];
}

function add(file: string, name: string | undefined, scopes: string | undefined, days: string | undefined): Outcome {
  if (!isPrincipalId(name)) throw new KeysFileError("keys add: give the key's NAME (1 to 255 characters)");
  if (scopes === undefined) throw new KeysFileError("keys add: give --scopes, e.g. --scopes pets:read,pets:write");
  const entries = readKeysFile(file, true);
  const key = newKey();
  const now = new Date();
  const entry: KeyFileEntry = {
    name,
    prefix: prefixOf(key),
    sha256: digestOf(key),
    scopes: parseScopes(scopes),
    createdAt: now.toISOString(),
  };
  if (days !== undefined) {
    if (!/^[0-9]{1,5}$/.test(days) || Number(days) < 1)
      throw new KeysFileError("--expires-in must be whole days from 1");
    entry.expiresAt = new Date(now.getTime() + Number(days) * 86_400_000).toISOString();
  }
  entries.push(entry);
  const held = entries.filter((e) => e.name === name).length;
  const lines = [
    `added a key for "${name}" (${entry.scopes.join(", ")}) to ${file}; ${held} key(s) for this name`,
    "The key, shown once (send it as Authorization: Bearer <key>):",
    key,
  ];
  return { lines, entries };
}

function list(file: string): Outcome {
  const entries = readKeysFile(file, true);
  if (entries.length === 0) return { lines: [`no keys in ${file}`] };
  const now = Date.now();
  const lines = entries.map((e) => {
    const expiry =
      e.expiresAt === undefined ? "" : Date.parse(e.expiresAt) <= now ? "  expired" : `  expires ${e.expiresAt}`;
    return `${e.name}\t${e.prefix}…\t${e.scopes.join(",")}\t${age(e.createdAt, now)}${expiry}`;
  });
  return { lines: ["name\tprefix\tscopes\tage", ...lines] };
}

function remove(file: string, given: string | undefined): Outcome {
  if (given === undefined || given === "") throw new KeysFileError("keys remove: give the KEY or its PREFIX");
  const entries = readKeysFile(file);
  const byKey = entries.filter((e) => e.sha256 === digestOf(given));
  const byPrefix = given.startsWith(KEY_PREFIX)
    ? entries.filter((e) => given.startsWith(e.prefix) || e.prefix === given)
    : [];
  const found = byKey.length === 1 ? byKey : byPrefix;
  if (found.length === 0) throw new KeysFileError(`keys remove: no key in ${file} is or starts with that`);
  if (found.length > 1)
    throw new KeysFileError(`keys remove: ${found.length} keys have that prefix: give the whole key`);
  const gone = found[0] as KeyFileEntry;
  return {
    lines: [`removed the key ${gone.prefix}… of "${gone.name}" from ${file}`],
    entries: entries.filter((e) => e !== gone),
  };
}

/** Runs `petstore keys …`; resolves the exit code. */
export async function runKeys(args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: {
        file: { type: "string" },
        scopes: { type: "string" },
        "expires-in": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    process.stderr.write(`petstore keys: ${(error as Error).message.split("\n")[0]}\n${KEYS_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, argument, ...extra] = positionals;
  if (values.help === true || command === undefined) {
    process.stdout.write(`${KEYS_USAGE}\n`);
    return command === undefined && values.help !== true ? 2 : 0;
  }
  const file = (values.file as string | undefined) ?? env.PETSTORE_API_KEYS_FILE;
  try {
    if (file === undefined || file === "")
      throw new KeysFileError("which keys file? give --file F or set PETSTORE_API_KEYS_FILE");
    if (extra.length > 0) throw new KeysFileError(`unexpected argument ${JSON.stringify(extra[0])}`);
    let outcome: Outcome;
    if (command === "add") {
      outcome = add(file, argument, values.scopes as string | undefined, values["expires-in"] as string | undefined);
    } else if (command === "list") {
      outcome = list(file);
    } else if (command === "remove") {
      outcome = remove(file, argument);
    } else {
      throw new KeysFileError(`unknown keys command ${JSON.stringify(command)} (add, list, remove)`);
    }
    if (outcome.entries !== undefined) await writeKeysFile(file, outcome.entries);
    process.stdout.write(`${outcome.lines.join("\n")}\n`);
    return 0;
  } catch (error) {
    const known = error instanceof KeysFileError;
    process.stderr.write(`petstore keys: ${known ? "" : "failed: "}${(error as Error).message.split("\n")[0]}\n`);
    return known ? 2 : 1;
  }
}
