/**
 * The standalone server's configuration: environment variables, and command-line flags of the
 * same names that override them (never for keys: a key on a command line leaks into `ps`).
 * Bad values throw ConfigError, whose one-line message the server prints before exiting 2.
 */
import { randomBytes } from "node:crypto";
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import type { CacheControlOptions } from "petstore-lib";
import type { JwtOptions } from "petstore-lib/auth";
import { BASE_PATH_PATTERN } from "petstore-lib/internal";
import { CACHE_FLAGS, CACHE_USAGE, readCacheSettings } from "./cache-settings.ts";
import { strayArgument } from "./stray-argument.ts";

/** A configuration the server cannot start with. The message is one line for an operator. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** How much the server logs (pino's levels). */
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
export const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export interface ServerConfig {
  /** TCP port; 0 picks a free one. */
  port: number;
  host: string;
  /** `memory`, `sqlite:<path>`, `redis://…`, `postgres://…` */
  storage: string;
  basePath: string;
  logLevel: LogLevel;
  /** Accepted API keys, every scope (at least one, unless a keys file or tokens are configured). */
  apiKeys: string[];
  /** The keys file of named, scoped keys (PETSTORE_API_KEYS_FILE): reloaded on SIGHUP and on change. */
  apiKeysFile?: string;
  /** OAuth 2.0 access tokens (PETSTORE_JWT_*): `jwt()`'s options, the issuer and audience at least. */
  jwt?: JwtOptions;
  /** Failed authentications per client address and window before 429 (default 30 a minute); false: off. */
  authFailureLimit?: { limit: number; windowSeconds: number } | false;
  /** The client address is X-Forwarded-For's last hop (a proxy you trust sets it). Default false. */
  trustProxy?: boolean;
  /** Seconds an Idempotency-Key is kept (default 86 400: 24 hours). */
  idempotencyTtlSeconds?: number;
  /** Time allowed to receive a request's headers (ms, default 10 000). */
  headersTimeoutMs?: number;
  /** Time allowed to receive a whole request (ms, default 30 000). */
  requestTimeoutMs?: number;
  /** Idle time before a kept-alive connection is closed (ms, default 5 000). */
  keepAliveTimeoutMs?: number;
  /** Time in-flight requests get to finish on SIGTERM/SIGINT (ms, default 10 000). */
  shutdownGraceMs?: number;
  /** Time a storage call may take before its request answers 503 storage_unavailable (ms, default 2 000). */
  storageTimeoutMs?: number;
  /** Processes serving the port (node:cluster; default 1). More than 1 needs a shared storage. */
  workers?: number;
  /** Port of the Prometheus metrics (`GET /metrics` on HOST); undefined: no metrics. */
  metricsPort?: number;
  /** Origins whose browser pages may call the API (CORS), or "*"; undefined: CORS off. */
  corsOrigins?: string[] | "*";
  /** Rate limits per caller (the key's scope), e.g. `{ limit: 600, windowSeconds: 60 }`; undefined: off. */
  rateLimit?: { limit: number; windowSeconds: number };
  /** What `Cache-Control` says (`createPetStore({ cacheControl })`); undefined: the defaults. */
  cacheControl?: CacheControlOptions;
  /** False: no answer is compressed (default true: zstd, br or gzip from 1 KiB). */
  compression?: boolean;
}

/** What a setting is when neither its variable nor its flag is given (and what `startServer` fills in). */
const DEFAULTS = { port: 8080, host: "127.0.0.1", storage: "memory", basePath: "/v1", logLevel: "info" } as const;

/**
 * The config `startServer` runs with: the defaults for the fields left out (a JavaScript caller's
 * partial config), `apiKeys` required, as there is no key to default to.
 *
 * @example completeConfig({ apiKeys: ["k"], port: 0 }) // { port: 0, host: "127.0.0.1", storage: "memory", … }
 */
export function completeConfig(config: Partial<ServerConfig>): ServerConfig {
  if (config === null || typeof config !== "object") {
    throw new ConfigError('startServer: config must be an object, at least { apiKeys: ["a-key"] }');
  }
  const apiKeys = config.apiKeys ?? [];
  const otherwise = config.apiKeysFile !== undefined || config.jwt !== undefined;
  if (!Array.isArray(apiKeys) || (apiKeys.length === 0 && !otherwise)) {
    throw new ConfigError(
      'startServer: config.apiKeys is required: a list of API keys, e.g. { apiKeys: ["a-key"] } (loadConfig(process.env) reads PETSTORE_API_KEYS)',
    );
  }
  const timeout = config.storageTimeoutMs;
  if (timeout !== undefined && !(typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0)) {
    throw new ConfigError(
      `startServer: config.storageTimeoutMs must be a positive number of milliseconds (got ${JSON.stringify(timeout)})`,
    );
  }
  const given = Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
  return { ...DEFAULTS, ...given, apiKeys };
}

/** What `loadConfig` read: the config, whether the key was generated, and whether help or the version was asked. */
export interface LoadedConfig {
  config: ServerConfig;
  generatedKey: boolean;
  help: boolean;
  /** `--version` or `-v`: print the package's version and exit. */
  version: boolean;
}

export const USAGE = `Usage: petstore [--port N] [--host ADDR] [--storage SPEC] [--base-path /v1] [--log-level info]
               [--workers N|auto] [--metrics-port N] [--idempotency-ttl S] [--cors-origins LIST]
               [--rate-limit N/S] [--cache-pet-max-age S] [--cache-page-max-age S]
               [--cache-no-transform on|off] [--cache-no-store on|off] [--compression on|off]

Every flag mirrors an environment variable (the flag wins):
  --port       PORT                TCP port (default 8080; 0 picks a free one)
  --host       HOST                address to listen on (default 127.0.0.1)
  --storage    PETSTORE_STORAGE    memory | sqlite:<path> | redis://… | postgres://… (default memory)
  --base-path  PETSTORE_BASE_PATH  base path of the API (default /v1)
  --log-level  LOG_LEVEL           ${LOG_LEVELS.join(" | ")} (default info)
  --idempotency-ttl  PETSTORE_IDEMPOTENCY_TTL  seconds an Idempotency-Key is kept (default 86400)
  --workers    PETSTORE_WORKERS    processes serving the port: N or auto (one per CPU; default 1)
  --metrics-port PETSTORE_METRICS_PORT  Prometheus metrics at http://HOST:PORT/metrics (default off)
  --cors-origins PETSTORE_CORS_ORIGINS  origins whose pages may call the API: comma-separated, or * (default off)
  --rate-limit PETSTORE_RATE_LIMIT  requests per key in each window: <limit>/<seconds>, e.g. 600/60 (default off)
${CACHE_USAGE}
API keys are read only from PETSTORE_API_KEYS (comma-separated, every scope) and from the keys file
PETSTORE_API_KEYS_FILE (named, scoped keys: petstore keys --help); OAuth 2.0 access tokens are taken
with PETSTORE_JWT_ISSUER and PETSTORE_JWT_AUDIENCE (PETSTORE_JWT_JWKS_URI, PETSTORE_JWT_ALGORITHMS);
PETSTORE_AUTH_FAILURE_LIMIT (default 30/60, or off) and PETSTORE_TRUST_PROXY (default false). Without
any of them a random key is generated and printed at start-up. Through npm, flags go after --: npm start -- --port 8081.
  --help (-h) prints this; --version (-v) prints the version.
Moving data: petstore export | import | migrate (petstore export --help).
API keys: petstore keys add | list | remove (petstore keys --help).`;

/** A setting as the user gave it: its text, and the flag or variable it came from (named in errors). */
interface Setting {
  raw: string;
  name: string;
}

function parsePort({ raw, name }: Setting): number {
  if (!/^[0-9]{1,5}$/.test(raw.trim()) || Number(raw) > 65535) {
    throw new ConfigError(`${name} must be an integer from 0 to 65535 (got ${JSON.stringify(raw)})`);
  }
  return Number(raw);
}

/** A count of workers from 1 to 1024, or "auto" (one per CPU). */
function parseWorkers({ raw, name }: Setting): number {
  const value = raw.trim().toLowerCase();
  if (value === "auto") return availableParallelism();
  if (!/^[0-9]{1,4}$/.test(value) || Number(value) < 1 || Number(value) > 1024) {
    throw new ConfigError(`${name} must be auto or an integer from 1 to 1024 (got ${JSON.stringify(raw)})`);
  }
  return Number(value);
}

/** The metrics port, when metrics are on. */
function parseMetricsPort(setting: Setting | undefined): number | undefined {
  if (setting === undefined || setting.raw.trim() === "") return undefined;
  return parsePort(setting);
}

function parseBasePath({ raw, name }: Setting): string {
  if (raw === "/" || raw === "") return "";
  if (!BASE_PATH_PATTERN.test(raw)) {
    throw new ConfigError(`${name} must look like /v1 or /api/v1 (got ${JSON.stringify(raw)})`);
  }
  return raw;
}

/** Seconds from 1 to 10 years. */
function parseTtl({ raw, name }: Setting): number {
  const text = raw.trim();
  if (!/^[0-9]{1,9}$/.test(text) || Number(text) < 1 || Number(text) > 10 * 365 * 86_400) {
    throw new ConfigError(`${name} must be a whole number of seconds from 1 to 315360000 (got ${JSON.stringify(raw)})`);
  }
  return Number(text);
}

function parseLevel({ raw, name }: Setting): LogLevel {
  const level = raw.trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new ConfigError(`${name} must be one of ${LOG_LEVELS.join(", ")} (got ${JSON.stringify(raw)})`);
  }
  return level as LogLevel;
}

/** Allowed CORS origins: comma-separated origins (`https://shop.example`), or `*`; empty: off. */
function parseCorsOrigins({ raw, name }: Setting): string[] | "*" | undefined {
  const text = raw.trim();
  if (text === "") return undefined;
  if (text === "*") return "*";
  const origins = text
    .split(",")
    .map((o) => o.trim())
    .filter((o) => o !== "");
  for (const origin of origins) {
    let normal: string | undefined;
    try {
      normal = new URL(origin).origin;
    } catch {}
    if (normal !== origin) {
      throw new ConfigError(
        `${name}: ${JSON.stringify(origin)} is not an origin (scheme://host[:port], no path or trailing slash, e.g. https://shop.example)`,
      );
    }
  }
  return origins;
}

/** Rate limits as `<limit>/<seconds>` (600/60: 600 requests a minute per key); empty: off. */
function parseRateLimit({ raw, name }: Setting): { limit: number; windowSeconds: number } | undefined {
  const text = raw.trim();
  if (text === "") return undefined;
  const match = /^([0-9]{1,15})\/([0-9]{1,5})$/.exec(text);
  const limit = Number(match?.[1]);
  const windowSeconds = Number(match?.[2]);
  if (match === null || limit < 1 || windowSeconds < 1 || windowSeconds > 86_400) {
    throw new ConfigError(
      `${name} must be <limit>/<seconds>: requests per key in each window, e.g. 600/60 (a limit from 1, a window from 1 to 86400 seconds; got ${JSON.stringify(raw)})`,
    );
  }
  return { limit, windowSeconds };
}

/**
 * The keys of PETSTORE_API_KEYS; one random key when it is unset or empty and nothing else
 * (`otherwise`: a keys file, tokens) authenticates. Never echoes a key.
 */
function readKeys(raw: string | undefined, otherwise: boolean): { keys: string[]; generated: boolean } {
  if (raw === undefined || raw.trim() === "") {
    return otherwise
      ? { keys: [], generated: false }
      : { keys: [randomBytes(24).toString("base64url")], generated: true };
  }
  const keys = raw
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k !== "");
  if (keys.length === 0) throw new ConfigError("PETSTORE_API_KEYS holds no key: give comma-separated keys");
  if (keys.some((k) => /[^!-~]/.test(k))) {
    throw new ConfigError("PETSTORE_API_KEYS: a key must be printable ASCII without spaces");
  }
  return { keys, generated: false };
}

/** PETSTORE_JWT_*: both the issuer and the audience, or neither. */
function readJwt(env: NodeJS.ProcessEnv): ServerConfig["jwt"] {
  const issuer = env.PETSTORE_JWT_ISSUER?.trim() || undefined;
  const audience = env.PETSTORE_JWT_AUDIENCE?.trim() || undefined;
  const jwksUri = env.PETSTORE_JWT_JWKS_URI?.trim() || undefined;
  const algorithms = env.PETSTORE_JWT_ALGORITHMS?.trim() || undefined;
  if (issuer === undefined && audience === undefined) {
    if (jwksUri !== undefined || algorithms !== undefined) {
      throw new ConfigError(
        "PETSTORE_JWT_JWKS_URI and PETSTORE_JWT_ALGORITHMS need PETSTORE_JWT_ISSUER and PETSTORE_JWT_AUDIENCE",
      );
    }
    return undefined;
  }
  if (issuer === undefined || audience === undefined) {
    throw new ConfigError("access tokens need both PETSTORE_JWT_ISSUER and PETSTORE_JWT_AUDIENCE");
  }
  for (const [name, url] of [
    ["PETSTORE_JWT_ISSUER", issuer],
    ["PETSTORE_JWT_JWKS_URI", jwksUri],
  ] as const) {
    if (url !== undefined && !/^https?:\/\/[^\s]+$/.test(url)) {
      throw new ConfigError(`${name} must be an http(s) URL (got ${JSON.stringify(url)})`);
    }
  }
  return {
    issuer,
    audience,
    ...(jwksUri === undefined ? {} : { jwksUri }),
    ...(algorithms === undefined
      ? {}
      : {
          algorithms: algorithms
            .split(",")
            .map((a) => a.trim())
            .filter((a) => a),
        }),
  };
}

/** PETSTORE_AUTH_FAILURE_LIMIT: `<limit>` a minute, `<limit>/<seconds>`, or `off`. */
function parseFailureLimit(raw: string | undefined): ServerConfig["authFailureLimit"] {
  const text = raw?.trim().toLowerCase() ?? "";
  if (text === "") return undefined;
  if (text === "off") return false;
  const match = /^([0-9]{1,9})(?:\/([0-9]{1,5}))?$/.exec(text);
  const limit = Number(match?.[1]);
  const windowSeconds = Number(match?.[2] ?? 60);
  if (match === null || limit < 1 || windowSeconds < 1 || windowSeconds > 86_400) {
    throw new ConfigError(
      `PETSTORE_AUTH_FAILURE_LIMIT must be <limit> (a minute), <limit>/<seconds> or off, e.g. 30/60 (got ${JSON.stringify(raw)})`,
    );
  }
  return { limit, windowSeconds };
}

/** PETSTORE_TRUST_PROXY: true or false (1 and 0, yes and no too). */
function parseTrustProxy(raw: string | undefined): boolean {
  const text = raw?.trim().toLowerCase() ?? "";
  if (text === "" || text === "false" || text === "0" || text === "no") return false;
  if (text === "true" || text === "1" || text === "yes") return true;
  throw new ConfigError(`PETSTORE_TRUST_PROXY must be true or false (got ${JSON.stringify(raw)})`);
}

/** The command's flags: each but --help and --version takes a value. */
const OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  storage: { type: "string" },
  "base-path": { type: "string" },
  "log-level": { type: "string" },
  "idempotency-ttl": { type: "string" },
  workers: { type: "string" },
  "metrics-port": { type: "string" },
  "cors-origins": { type: "string" },
  "rate-limit": { type: "string" },
  ...CACHE_FLAGS,
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

function readFlags(argv: readonly string[], env: NodeJS.ProcessEnv) {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...argv], strict: true, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    const message = (error as Error).message.split("\n")[0] ?? "invalid arguments";
    const keys = /api[-_]?keys?/i.test(message) ? " (keys are read only from PETSTORE_API_KEYS)" : "";
    throw new ConfigError(`${message}${keys}; see --help`);
  }
  // A stray value is most often a flag's whose name npm kept for itself (npm start --port 4645).
  if (parsed.positionals.length > 0) {
    throw new ConfigError(`${strayArgument(parsed.positionals, Object.keys(OPTIONS), env)}; see --help`);
  }
  return parsed.values;
}

/**
 * Reads the configuration from the environment and the command line.
 *
 * @example const { config, generatedKey } = loadConfig(process.env, process.argv.slice(2));
 */
export function loadConfig(env: NodeJS.ProcessEnv, argv: readonly string[] = []): LoadedConfig {
  const flags = readFlags(argv, env);
  // The flag wins; an empty variable counts as unset (`PORT= npm start`); an empty flag is a mistake.
  const pick = (flag: string, variable: string, fallback: string): Setting => {
    const given = flags[flag as keyof typeof flags];
    if (typeof given === "string") return { raw: given, name: `--${flag}` };
    return { raw: env[variable] || fallback, name: variable };
  };
  const host = pick("host", "HOST", DEFAULTS.host);
  if (host.raw.trim() === "") throw new ConfigError(`${host.name} must not be empty`);
  const storage = pick("storage", "PETSTORE_STORAGE", DEFAULTS.storage);
  if (storage.raw.trim() === "") throw new ConfigError(`${storage.name} must not be empty`);
  const jwt = readJwt(env);
  const apiKeysFile = env.PETSTORE_API_KEYS_FILE?.trim() || undefined;
  const { keys, generated } = readKeys(env.PETSTORE_API_KEYS, jwt !== undefined || apiKeysFile !== undefined);
  const authFailureLimit = parseFailureLimit(env.PETSTORE_AUTH_FAILURE_LIMIT);
  const trustProxy = parseTrustProxy(env.PETSTORE_TRUST_PROXY);
  const workersSetting = pick("workers", "PETSTORE_WORKERS", "1");
  const workers = parseWorkers(workersSetting);
  const metricsPort = parseMetricsPort(
    flags["metrics-port"] !== undefined || env.PETSTORE_METRICS_PORT !== undefined
      ? pick("metrics-port", "PETSTORE_METRICS_PORT", "")
      : undefined,
  );
  const corsOrigins = parseCorsOrigins(pick("cors-origins", "PETSTORE_CORS_ORIGINS", ""));
  const rateLimit = parseRateLimit(pick("rate-limit", "PETSTORE_RATE_LIMIT", ""));
  const caching = readCacheSettings(
    (flag, variable) => pick(flag, variable, ""),
    (message) => {
      throw new ConfigError(message);
    },
  );
  if (workers > 1 && storage.raw.trim() === "memory") {
    // "auto" is named as given, with what it came to on this machine.
    const asked = workersSetting.raw.trim().toLowerCase() === "auto" ? `auto (${workers})` : String(workers);
    throw new ConfigError(
      `${workersSetting.name}=${asked} needs a shared storage (sqlite:<path>, redis://…, postgres://…): memory storage lives in one process`,
    );
  }
  return {
    config: {
      port: parsePort(pick("port", "PORT", String(DEFAULTS.port))),
      host: host.raw.trim(),
      storage: storage.raw.trim(),
      basePath: parseBasePath(pick("base-path", "PETSTORE_BASE_PATH", DEFAULTS.basePath)),
      logLevel: parseLevel(pick("log-level", "LOG_LEVEL", DEFAULTS.logLevel)),
      apiKeys: keys,
      idempotencyTtlSeconds: parseTtl(pick("idempotency-ttl", "PETSTORE_IDEMPOTENCY_TTL", "86400")),
      // Set only when asked for: the defaults (one process, no metrics) need no field.
      ...(workers > 1 ? { workers } : {}),
      ...(metricsPort === undefined ? {} : { metricsPort }),
      ...(corsOrigins === undefined ? {} : { corsOrigins }),
      ...(rateLimit === undefined ? {} : { rateLimit }),
      ...caching,
      ...(apiKeysFile === undefined ? {} : { apiKeysFile }),
      ...(jwt === undefined ? {} : { jwt }),
      ...(authFailureLimit === undefined ? {} : { authFailureLimit }),
      ...(trustProxy ? { trustProxy } : {}),
    },
    generatedKey: generated,
    help: flags.help === true,
    version: flags.version === true,
  };
}
