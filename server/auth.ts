/**
 * The standalone server's `auth`, from its configuration: the keys of PETSTORE_API_KEYS (every
 * scope), the keys file's named, scoped keys (watched: ./keys/watch.ts), access tokens of the
 * PETSTORE_JWT_* issuer, tried in that order; failed authentications throttled per client address,
 * with one warning per address and window; X-Forwarded-For trusted when PETSTORE_TRUST_PROXY says.
 */
import type { AuthSettings, VerifyToken } from "petstore-lib/auth";
import { jwt } from "petstore-lib/auth";
import type { ServerConfig } from "./config.ts";
import { ConfigError } from "./config.ts";
import { watchKeysFile } from "./keys/watch.ts";
import type { Logger } from "./logger.ts";

export interface ServerAuth {
  auth: AuthSettings;
  /** Reads the keys file again (SIGHUP); nothing without one. */
  reload(): void;
  /** Stops watching the keys file. */
  close(): void;
}

/** The server's auth; a keys file or token settings that cannot work are a ConfigError. */
export function serverAuth(config: ServerConfig, logger: Logger): ServerAuth {
  const verify: VerifyToken[] = [];
  let reload = () => {};
  let close = () => {};
  if (config.apiKeysFile !== undefined) {
    let watched: ReturnType<typeof watchKeysFile>;
    try {
      watched = watchKeysFile(config.apiKeysFile, logger);
    } catch (error) {
      throw new ConfigError(`PETSTORE_API_KEYS_FILE: ${(error as Error).message}`);
    }
    verify.push(watched.verify);
    reload = watched.reload;
    close = watched.close;
  }
  if (config.jwt !== undefined) {
    try {
      verify.push(jwt(config.jwt));
    } catch (error) {
      close();
      throw new ConfigError(`PETSTORE_JWT_*: ${(error as Error).message.replace(/^jwt: /, "")}`);
    }
  }
  const limit = config.authFailureLimit;
  const auth: AuthSettings = {
    ...(config.apiKeys.length === 0 ? {} : { keys: config.apiKeys }),
    ...(verify.length === 0 ? {} : { verify }),
    failureLimit:
      limit === false
        ? false
        : {
            ...(limit ?? { limit: 30, windowSeconds: 60 }),
            onThrottled: ({ address, limit: most, windowSeconds }) =>
              logger.warn(
                { address, limit: most, windowSeconds },
                "failed authentications: this address is refused (429) until the window ends",
              ),
          },
    trustProxy: config.trustProxy === true,
  };
  return { auth, reload, close };
}
