/**
 * The real services the storage tests talk to, and the rule for when one is missing: a loud
 * "SKIPPED" line and no tests, except with CI=true, where a missing service is a failing test.
 * A Redis Cluster is made by the tests themselves, from redis-server and redis-cli.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { redisClusterInstallable } from "../support/redis-cluster.ts";

export const REDIS_URL = process.env.PETSTORE_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
export const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** A prefix unique to this test run: lower-case letters and digits, valid as a Redis namespace and a SQL table name. */
export const RUN = `t${process.pid.toString(36)}${randomBytes(3).toString("hex")}`;

/**
 * True when something accepts TCP connections at the URL's host and port (checked synchronously in
 * a child: 3 s for the connection once it runs, and time for the child itself to start, which on a
 * loaded machine can take seconds; a service that is not there refuses at once).
 */
function listening(url: string, defaultPort: number): boolean {
  const { hostname, port } = new URL(url);
  const probe = `const s = require("node:net").connect(${Number(port) || defaultPort}, ${JSON.stringify(hostname.replace(/^\[|\]$/g, ""))});
s.on("connect", () => process.exit(0)); s.on("error", () => process.exit(1)); setTimeout(() => process.exit(1), 3000);`;
  return spawnSync(process.execPath, ["-e", probe], { timeout: 30_000, stdio: "ignore" }).status === 0;
}

const ENV_NAME: Record<string, string> = { redis: "PETSTORE_TEST_REDIS_URL", postgres: "PETSTORE_TEST_POSTGRES_URL" };
const DEFAULT_PORT: Record<string, number> = { redis: 6379, postgres: 5432 };
const checked = new Map<string, boolean>();

/**
 * Whether the tests of `service` ("redis" or "postgres") can run. When the service does not
 * answer: prints SKIPPED (once), or with CI=true registers a failing test instead.
 */
export function serviceAvailable(service: "redis" | "postgres", what: string): boolean {
  const url = service === "redis" ? REDIS_URL : POSTGRES_URL;
  let up = checked.get(service);
  if (up === undefined) {
    up = listening(url, DEFAULT_PORT[service] as number);
    checked.set(service, up);
  }
  if (up) return true;
  missing(
    service,
    what,
    `must answer at ${url}`,
    `nothing answers at ${url}`,
    `start ${service} or set ${ENV_NAME[service]}`,
  );
  return false;
}

/** Registers a failing test (CI=true) or prints SKIPPED, once per call, for a service that is not there. */
function missing(service: string, what: string, rule: string, found: string, fix: string): void {
  if (process.env.CI === "true") {
    const failing = suite(`${service} (${what})`);
    failing(`${what}: ${service} ${rule} when CI=true`, () => {
      assert.unreachable(`${found}; ${fix}`);
    });
    failing.run();
  } else {
    console.log(`\n*** SKIPPED: ${what} tests on ${service}: ${found} (${fix}; with CI=true this fails) ***\n`);
  }
}

let clusterChecked: boolean | undefined;

/**
 * Whether the tests on a Redis Cluster can run (the tests start their own from redis-server and
 * redis-cli). When they cannot: SKIPPED, or with CI=true a failing test, as for a missing service.
 */
export function redisClusterAvailable(what: string): boolean {
  clusterChecked ??= redisClusterInstallable();
  if (clusterChecked) return true;
  missing(
    "redis-cluster",
    what,
    "must be startable here (redis-server and redis-cli)",
    "redis-server or redis-cli is not on PATH",
    "install them, e.g. apt-get install redis-server",
  );
  return false;
}
