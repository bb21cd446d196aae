/**
 * The keys file in a running server: read at start, read again on SIGHUP and whenever the file
 * changes (polled once a second: a rename over the file, as editors and `petstore keys` write it,
 * is seen too). The verifier switches to the new keys at once and requests in flight keep theirs:
 * no request fails during a rotation. A file that cannot be read keeps the last keys and is logged.
 */
import { unwatchFile, watchFile } from "node:fs";
import type { VerifyToken } from "petstore-lib/auth";
import { apiKeys } from "petstore-lib/auth";
import type { Logger } from "../logger.ts";
import { readKeysFile, toApiKeys } from "./file.ts";

export interface WatchedKeys {
  /** The verifier of the file's current keys. */
  verify: VerifyToken;
  /** Reads the file again now (SIGHUP). */
  reload(): void;
  /** Stops watching the file. */
  close(): void;
}

/** The verifier of a list of entries; none at all refuses every token. */
function verifierOf(file: string): VerifyToken {
  const keys = toApiKeys(readKeysFile(file));
  return keys.length === 0 ? () => false : apiKeys(keys);
}

/**
 * Watches `file`; throws a KeysFileError (one line) when it cannot be read at start.
 *
 * @example const keys = watchKeysFile("/etc/petstore/keys.json", logger); process.on("SIGHUP", keys.reload);
 */
export function watchKeysFile(file: string, logger: Logger, intervalMs = 1000): WatchedKeys {
  let current = verifierOf(file);
  const reload = () => {
    try {
      current = verifierOf(file);
      logger.info({ file }, "keys file reloaded");
    } catch (error) {
      logger.error({ file, reason: (error as Error).message }, "keys file not reloaded: the last keys stay in use");
    }
  };
  const changed = (now: { mtimeMs: number; ino: number; size: number }, before: typeof now) => {
    if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino || now.size !== before.size) reload();
  };
  watchFile(file, { interval: intervalMs, persistent: false }, changed);
  return {
    verify: (token) => current(token),
    reload,
    close: () => unwatchFile(file, changed),
  };
}
