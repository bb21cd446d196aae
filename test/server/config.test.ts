/**
 * The standalone server's configuration: how environment variables and flags are read, and
 * that a configuration which cannot work ends the process with code 2 and one clear line on
 * stderr, never a stack trace and never a printed key.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ConfigError, loadConfig, USAGE } from "../../server/config.ts";
import type { Child } from "../support/server-child.ts";
import { spawnServer } from "../support/server-child.ts";

const children: Child[] = [];
test.after.each(async () => {
  for (const child of children.splice(0)) await child.stop();
});

test("config: the defaults are port 8080 on 127.0.0.1, memory storage, base path /v1, log level info", () => {
  const { config, generatedKey } = loadConfig({ PETSTORE_API_KEYS: "k1" });
  assert.equal(config, {
    port: 8080,
    host: "127.0.0.1",
    storage: "memory",
    basePath: "/v1",
    logLevel: "info",
    apiKeys: ["k1"],
    idempotencyTtlSeconds: 86_400,
  });
  assert.is(generatedKey, false);
});

test("config: PETSTORE_IDEMPOTENCY_TTL (or --idempotency-ttl) sets the seconds an Idempotency-Key is kept", () => {
  assert.is(loadConfig({ PETSTORE_API_KEYS: "k1", PETSTORE_IDEMPOTENCY_TTL: "60" }).config.idempotencyTtlSeconds, 60);
  assert.is(loadConfig({ PETSTORE_API_KEYS: "k1" }, ["--idempotency-ttl", "5"]).config.idempotencyTtlSeconds, 5);
});

test("config: flags override the environment, and an empty variable counts as unset", () => {
  const env = { PORT: "", HOST: "", PETSTORE_STORAGE: "", LOG_LEVEL: "", PETSTORE_API_KEYS: "k1" };
  assert.is(loadConfig(env).config.port, 8080);
  const { config } = loadConfig({ ...env, PORT: "9000", PETSTORE_BASE_PATH: "/v9" }, [
    "--port=0",
    "--host",
    "0.0.0.0",
    "--storage",
    "sqlite:./x.db",
    "--base-path",
    "/api/v1",
    "--log-level=WARN",
  ]);
  assert.equal(
    [config.port, config.host, config.storage, config.basePath, config.logLevel],
    [0, "0.0.0.0", "sqlite:./x.db", "/api/v1", "warn"],
  );
});

test("config: PETSTORE_API_KEYS is a comma-separated list, spaces around keys ignored", () => {
  assert.equal(loadConfig({ PETSTORE_API_KEYS: " a1 , b2,,c3 " }).config.apiKeys, ["a1", "b2", "c3"]);
});

test("config: without PETSTORE_API_KEYS one random key is generated, different each time", () => {
  const first = loadConfig({});
  const second = loadConfig({ PETSTORE_API_KEYS: " " });
  assert.ok(first.generatedKey && second.generatedKey);
  assert.is(first.config.apiKeys.length, 1);
  assert.ok((first.config.apiKeys[0] ?? "").length >= 32);
  assert.is.not(first.config.apiKeys[0], second.config.apiKeys[0]);
});

test("config: bad values throw ConfigError naming the setting, never echoing a key", () => {
  const cases: [Record<string, string>, string[], RegExp][] = [
    [{ PORT: "eighty" }, [], /PORT/],
    [{ PORT: "65536" }, [], /PORT/],
    [{ PORT: "-1" }, [], /PORT/],
    [{}, ["--port", "1e3"], /^--port must be/],
    [{ LOG_LEVEL: "loud" }, [], /LOG_LEVEL/],
    [{ PETSTORE_IDEMPOTENCY_TTL: "0" }, [], /PETSTORE_IDEMPOTENCY_TTL/],
    [{ PETSTORE_IDEMPOTENCY_TTL: "1.5" }, [], /PETSTORE_IDEMPOTENCY_TTL/],
    [{ PETSTORE_IDEMPOTENCY_TTL: "a day" }, [], /PETSTORE_IDEMPOTENCY_TTL/],
    [{ PETSTORE_BASE_PATH: "v1" }, [], /PETSTORE_BASE_PATH/],
    [{ PETSTORE_BASE_PATH: "/v1/" }, [], /PETSTORE_BASE_PATH/],
    [{ PETSTORE_API_KEYS: ",," }, [], /PETSTORE_API_KEYS/],
    [{ PETSTORE_API_KEYS: "good,bad key" }, [], /PETSTORE_API_KEYS/],
    [{}, ["--api-keys=secret-on-the-command-line"], /PETSTORE_API_KEYS/],
    [{}, ["--colour"], /--colour/],
    [{}, ["stray"], /stray|positional/i],
  ];
  for (const [env, argv, message] of cases) {
    try {
      loadConfig({ PETSTORE_API_KEYS: "k1", ...env }, argv);
      assert.unreachable(`${JSON.stringify(env)} ${argv.join(" ")} was accepted`);
    } catch (error) {
      assert.instance(error, ConfigError, String(error));
      assert.match((error as Error).message, message);
      assert.not.match((error as Error).message, /bad key|secret-on-the-command-line/);
      assert.not.ok((error as Error).message.includes("\n"), "one line");
    }
  }
});

test("config: --workers auto on memory is reported as given, with what it came to: --workers=auto (N)", () => {
  const cpus = availableParallelism();
  for (const [env, argv, name] of [
    [{}, ["--workers", "auto"], "--workers"],
    [{ PETSTORE_WORKERS: "AUTO" }, [], "PETSTORE_WORKERS"],
  ] as const) {
    const load = () => loadConfig({ PETSTORE_API_KEYS: "k1", ...env }, argv);
    if (cpus === 1) assert.is(load().config.workers, undefined, "one CPU: one process, nothing to refuse");
    else assert.throws(load, new RegExp(`^${name}=auto \\(${cpus}\\) needs a shared storage`));
  }
});

test("config: a stray argument from `npm start --port 4645` (npm kept --port) says to write `npm start -- --port 4645`", () => {
  const message = (env: Record<string, string>, argv: string[]) => {
    try {
      loadConfig({ PETSTORE_API_KEYS: "k1", ...env }, argv);
    } catch (error) {
      assert.instance(error, ConfigError);
      return (error as Error).message;
    }
    throw new Error(`${argv.join(" ")} was accepted`);
  };
  // What npm hands the command: the value alone, the flag's name in npm_config_<name>.
  const npmStart = { npm_lifecycle_event: "start", npm_config_port: "true" };
  assert.is(
    message(npmStart, ["4645"]),
    "unexpected argument '4645': did you mean `npm start -- --port 4645`? (npm keeps flags before -- for itself); see --help",
  );
  assert.match(
    message({ npm_lifecycle_event: "serve", npm_config_base_path: "true" }, ["/shop/v1"]),
    /did you mean `npm run serve -- --base-path \/shop\/v1`\?/,
  );
  assert.match(message({ npm_lifecycle_event: "start" }, ["4645"]), /did you mean `npm start -- --port 8081`\?/);
  assert.match(message({}, ["4645"]), /^unexpected argument '4645': flags are written --name value/);
  assert.match(
    message({ npm_lifecycle_event: "npx" }, ["4645"]),
    /flags are written --name value/,
    "npx passes flags on",
  );
});

test("config: --version and -v ask for the version; --help and -h for the usage, which names both", () => {
  const load = (argv: string[]) => loadConfig({ PETSTORE_API_KEYS: "k1" }, argv);
  assert.equal([load(["--version"]).version, load(["-v"]).version, load([]).version], [true, true, false]);
  assert.equal([load(["--help"]).help, load(["-h"]).help], [true, true]);
  assert.match(USAGE, /--version \(-v\) prints the version/);
  assert.match(USAGE, /npm start -- --port 8081/);
});

/** Runs the server with a bad configuration: it must exit 2 with one line on stderr. */
async function expectExit2(env: Record<string, string>, args: string[], mentions: RegExp): Promise<void> {
  const child = spawnServer({ PETSTORE_API_KEYS: "a-key-never-printed", ...env }, args);
  children.push(child);
  const code = await child.exited(20_000);
  const stderr = child.stderr();
  assert.is(code, 2, `exit code (stderr: ${stderr})`);
  assert.is(stderr.split("\n").length, 2, `exactly one line: ${JSON.stringify(stderr)}`);
  assert.ok(stderr.endsWith("\n"));
  assert.match(stderr, mentions);
  assert.not.match(stderr, /\n\s+at |Error:|\.ts:\d+/, "no stack trace");
  assert.not.ok(stderr.includes("a-key-never-printed") || child.stdout().includes("a-key-never-printed"));
  assert.not.match(child.stdout(), /listening/);
}

test("server: an unparsable PORT exits 2 with one line on stderr", async () => {
  await expectExit2({ PORT: "http" }, [], /PORT/);
});

test("server: an unknown storage scheme exits 2 with one line on stderr", async () => {
  await expectExit2({ PORT: "0", PETSTORE_STORAGE: "ftp://user:pw@example.com/pets" }, [], /storage/i);
});

test("server: an unreachable storage at start exits 2 with one line on stderr, without the password", async () => {
  await expectExit2({ PORT: "0", PETSTORE_STORAGE: "redis://:hunter22@127.0.0.1:1" }, [], /redis|storage/i);
  assert.not.match(children[0]?.stderr() ?? "", /hunter22/);
});

test("server: a bad LOG_LEVEL or base path exits 2 with one line on stderr", async () => {
  await expectExit2({ PORT: "0", LOG_LEVEL: "chatty" }, [], /LOG_LEVEL/);
  await expectExit2({ PORT: "0" }, ["--base-path", "no-slash"], /--base-path must look like/);
});

test("server: a key given as a flag is refused (keys come only from PETSTORE_API_KEYS), exit 2", async () => {
  await expectExit2({ PORT: "0" }, ["--api-keys", "k"], /PETSTORE_API_KEYS/);
});

test("config: PETSTORE_CORS_ORIGINS (or --cors-origins) turns CORS on for comma-separated origins, or *", () => {
  const load = (env: Record<string, string>, argv: string[] = []) =>
    loadConfig({ PETSTORE_API_KEYS: "k1", ...env }, argv).config.corsOrigins;
  assert.is(load({}), undefined, "off by default");
  assert.equal(load({ PETSTORE_CORS_ORIGINS: "https://shop.example, http://localhost:5173" }), [
    "https://shop.example",
    "http://localhost:5173",
  ]);
  assert.is(load({ PETSTORE_CORS_ORIGINS: "*" }), "*");
  assert.equal(load({ PETSTORE_CORS_ORIGINS: "*" }, ["--cors-origins", "https://a.example"]), ["https://a.example"]);
  assert.throws(
    () => load({ PETSTORE_CORS_ORIGINS: "https://shop.example/" }),
    /^PETSTORE_CORS_ORIGINS: "https:\/\/shop\.example\/" is not an origin/,
  );
  assert.throws(
    () => load({}, ["--cors-origins", "shop.example"]),
    /^--cors-origins: "shop\.example" is not an origin/,
  );
});

test("config: an error names the flag when the value came from one, else the variable", () => {
  const cases: [Record<string, string>, string[], RegExp][] = [
    [{}, ["--workers", "abc"], /^--workers must be auto or an integer/],
    [{ PETSTORE_WORKERS: "abc" }, [], /^PETSTORE_WORKERS must be auto or an integer/],
    [{ PETSTORE_WORKERS: "2" }, ["--workers", "x"], /^--workers must be/],
    [{}, ["--metrics-port", "http"], /^--metrics-port must be an integer/],
    [{ PETSTORE_METRICS_PORT: "http" }, [], /^PETSTORE_METRICS_PORT must be an integer/],
    [{}, ["--log-level", "loud"], /^--log-level must be one of/],
    [{}, ["--idempotency-ttl", "0"], /^--idempotency-ttl must be a whole number/],
    [{}, ["--host", ""], /^--host must not be empty/],
    [{}, ["--storage", ""], /^--storage must not be empty/],
    [{}, ["--workers", "2"], /^--workers=2 needs a shared storage/],
    [{ PETSTORE_WORKERS: "2" }, [], /^PETSTORE_WORKERS=2 needs a shared storage/],
    [{ PETSTORE_WORKERS: "3" }, ["--workers", "4"], /^--workers=4 needs a shared storage/],
  ];
  for (const [env, argv, message] of cases) {
    assert.throws(
      () => loadConfig({ PETSTORE_API_KEYS: "k1", ...env }, argv),
      message,
      `${JSON.stringify(env)} ${argv}`,
    );
  }
});

test("server: a port already in use exits 2 with one line that says so and how to choose another", async () => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
  const port = (blocker.address() as net.AddressInfo).port;
  try {
    await expectExit2(
      { PORT: String(port) },
      [],
      new RegExp(
        `^petstore: port ${port} on 127\\.0\\.0\\.1 is already in use \\(EADDRINUSE\\): choose another with PORT or --port`,
      ),
    );
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
});

/** Runs server/bin/petstore.js from the checkout with `args`: its exit code and stdout. */
async function runBin(args: string[]): Promise<{ code: unknown; out: string }> {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const child = spawn(process.execPath, ["server/bin/petstore.js", ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (s: string) => {
    out += s;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const code = await new Promise((resolve) => child.once("exit", resolve));
  clearTimeout(timer);
  return { code, out };
}

test("server/bin/petstore.js: --version (and -v) prints the package's version and exits 0", async () => {
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  for (const flag of ["--version", "-v"]) assert.equal(await runBin([flag]), { code: 0, out: `${version}\n` }, flag);
});

test("server/bin/petstore.js: --help prints the usage and exits 0 (from a checkout, through tsx)", async () => {
  const { code, out } = await runBin(["--help"]);
  assert.is(code, 0);
  assert.match(out, /Usage: petstore/);
  assert.match(out, /PETSTORE_API_KEYS/);
});

test.run();
