/**
 * openStorage, the storage URL of the standalone server (PETSTORE_STORAGE): every accepted form,
 * one clear StorageConfigError for everything that cannot work (unknown scheme, bad namespace,
 * unreachable backend, driver not installed), and no password ever in a message.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { requireFromDriver } from "../../lib/storage/driver.ts";
import { openStorage, StorageConfigError } from "../../lib/storage/open.ts";
import { postgresBackend, redisBackend } from "./backends.ts";
import { freePort } from "./outage.ts";
import { POSTGRES_URL, REDIS_URL, RUN, serviceAvailable } from "./services.ts";

type Sqlite3 = typeof import("sqlite3");

const s = suite("storage: openStorage");
const dir = mkdtempSync(join(tmpdir(), "petstore-open-"));
const redisUp = serviceAvailable("redis", "openStorage");
const postgresUp = serviceAvailable("postgres", "openStorage");

s.after(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (redisUp) await redisBackend().cleanup([`${RUN}_open`]);
  if (postgresUp) await postgresBackend().cleanup([`${RUN}_open`]);
});

async function configError(spec: string): Promise<string> {
  try {
    const storage = await openStorage(spec);
    await storage.close();
  } catch (error) {
    assert.instance(error, StorageConfigError, `${spec}: ${String(error)}`);
    assert.not.match((error as Error).message, /\n/, "one line");
    return (error as Error).message;
  }
  throw new Error(`${spec} should not open`);
}

function tablesOf(path: string): Promise<string[]> {
  const sqlite3 = requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");
  const db = new sqlite3.Database(path);
  return new Promise((resolve, reject) =>
    db.all("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", (error, rows: { name: string }[]) => {
      db.close();
      if (error) reject(error);
      else resolve(rows.map((r) => r.name));
    }),
  );
}

s("openStorage: memory opens the in-process storage", async () => {
  const storage = await openStorage("memory");
  assert.is(storage.kind, "memory");
  assert.is((await storage.create({ name: "a", categoryId: 1, status: "sold" })).id, 1);
  await storage.close();
});

s("openStorage: an unknown or malformed storage is a StorageConfigError that lists the accepted forms", async () => {
  for (const spec of ["", "Memory", "mongodb://127.0.0.1/x", "file:./pets.db", "redis", "127.0.0.1:6379", "http://x"]) {
    const message = await configError(spec);
    assert.match(message, /memory, sqlite:<path>, redis:\/\/.*postgres:\/\//, spec);
  }
  assert.match(await configError("sqlite:"), /needs a file path/);
});

s("openStorage: sqlite:<path> opens (and creates) the file, ?namespace= names its tables", async () => {
  const path = join(dir, "a.db");
  const storage = await openStorage(`sqlite:${path}?namespace=shop_eu`);
  assert.is(storage.kind, "sqlite");
  await storage.create({ name: "a", categoryId: 1, status: "sold" });
  await storage.close();
  assert.equal(await tablesOf(path), [
    "shop_eu_idempotency",
    "shop_eu_index",
    "shop_eu_meta",
    "shop_eu_rate",
    "shop_eu_seq",
    "shop_eu_values",
  ]);
  const again = await openStorage(`sqlite://${path}`);
  assert.equal(await again.list({ after: 0, limit: 10 }), []);
  await again.close();
  assert.equal(await tablesOf(path), [
    "petstore_idempotency",
    "petstore_index",
    "petstore_meta",
    "petstore_rate",
    "petstore_seq",
    "petstore_values",
    "shop_eu_idempotency",
    "shop_eu_index",
    "shop_eu_meta",
    "shop_eu_rate",
    "shop_eu_seq",
    "shop_eu_values",
  ]);
});

s(
  "openStorage: a bad namespace or option is a StorageConfigError naming the rule and namespace, the setting written",
  async () => {
    assert.match(await configError(`sqlite:${join(dir, "b.db")}?namespace=Bad-Name`), /namespace must be .*"Bad-Name"/);
    assert.match(await configError("redis://127.0.0.1:6379?namespace=a:b"), /namespace must be/);
    assert.match(await configError("redis://127.0.0.1:6379?namespace="), /namespace must be/);
    assert.match(await configError("postgres://127.0.0.1/x?namespace=drop;table"), /namespace must be/);
  },
);

s(
  "openStorage: an unknown query parameter (a typo such as ?nmespace=) is a StorageConfigError naming it and the accepted ones",
  async () => {
    const cases: [string, RegExp][] = [
      [
        `sqlite:${join(dir, "c.db")}?nmespace=shop`,
        /unknown query parameter "nmespace"; a sqlite URL takes namespace$/,
      ],
      [
        "redis://127.0.0.1:6379?namespace=shop&durabilty=replicated",
        /"durabilty"; a redis URL takes namespace, durability$/,
      ],
      ["rediss+cluster://a:7000,b:7001?nmespace=shop", /"nmespace"; a redis URL takes namespace, durability$/],
      [
        "postgres://127.0.0.1/x?nmespace=shop",
        /"nmespace"; a postgres URL takes namespace and pg's connection parameters \(sslmode, /,
      ],
    ];
    for (const [spec, message] of cases) assert.match(await configError(spec), message, spec);
    // pg's own parameters are pg's: the URL is refused only for the unreachable port.
    const port = await freePort();
    assert.match(
      await configError(
        `postgres://postgres@127.0.0.1:${port}/test?sslmode=disable&application_name=shop&namespace=shop`,
      ),
      /cannot reach postgres/,
    );
  },
);

s("openStorage: a backend that cannot be reached or opened at start is a StorageConfigError saying so", async () => {
  const port = await freePort();
  assert.match(
    await configError(`redis://127.0.0.1:${port}`),
    /cannot reach redis at host 127\.0\.0\.1, port \d+ \(redis:\/\/127\.0\.0\.1:\d+\): connection refused \[ECONNREFUSED\]/,
  );
  assert.match(
    await configError(`postgres://postgres@127.0.0.1:${port}/test`),
    /cannot reach postgres at host 127\.0\.0\.1, port \d+ \(postgres:\/\/postgres@127\.0\.0\.1:\d+\/test\): connection refused \[ECONNREFUSED\]/,
  );
  assert.match(
    await configError(`sqlite:${join(dir, "missing-folder", "x.db")}`),
    /cannot open sqlite storage at .*missing-folder\/x\.db: no such directory \[ENOENT\]/,
  );
});

s("openStorage: a password in the storage URL never appears in an error message", async () => {
  const port = await freePort();
  for (const spec of [
    `redis://:s3cret-pw@127.0.0.1:${port}`,
    `rediss://user:s3cret-pw@127.0.0.1:${port}`,
    `postgres://postgres:s3cret-pw@127.0.0.1:${port}/test`,
    "mongodb://user:s3cret-pw@127.0.0.1/x",
    "redis://:s3cret-pw@127.0.0.1:6379?namespace=no:colons",
  ]) {
    const message = await configError(spec);
    assert.not.match(message, /s3cret/, spec);
  }
});

if (redisUp) {
  s("openStorage: redis://…?namespace= prefixes every key the store writes", async () => {
    const storage = await openStorage(`${REDIS_URL}?namespace=${RUN}_open`);
    assert.is(storage.kind, "redis");
    await storage.create({ name: "a", categoryId: 1, status: "sold" });
    await storage.close();
    const { createClient } = await import("@keyv/redis");
    const client = createClient({ url: REDIS_URL });
    await client.connect();
    const keys = (await client.keys(`${RUN}_open*`)).sort();
    client.destroy();
    assert.equal(keys, [`${RUN}_open::1`, `${RUN}_open:ids`, `${RUN}_open:ids:sold`, `${RUN}_open:seq`]);
  });
}

if (postgresUp) {
  s("openStorage: postgres://…?namespace= names the tables and the sequence", async () => {
    const storage = await openStorage(`${POSTGRES_URL}?namespace=${RUN}_open`);
    assert.is(storage.kind, "postgres");
    await storage.create({ name: "a", categoryId: 1, status: "sold" });
    await storage.close();
    const pg = requireFromDriver<{
      Client: new (
        url: string,
      ) => {
        connect(): Promise<void>;
        query(s: string, p: unknown[]): Promise<{ rows: { relname: string }[] }>;
        end(): Promise<void>;
      };
    }>("@keyv/postgres", "pg", "postgres");
    const client = new pg.Client(POSTGRES_URL);
    await client.connect();
    const { rows } = await client.query("SELECT relname FROM pg_class WHERE relname LIKE $1 ORDER BY relname", [
      `${RUN}_open%`,
    ]);
    await client.end();
    assert.equal(
      rows.map((r) => r.relname),
      [
        `${RUN}_open_id_seq`,
        `${RUN}_open_idempotency`,
        `${RUN}_open_idempotency_expires_at`,
        `${RUN}_open_idempotency_pkey`,
        `${RUN}_open_index`,
        `${RUN}_open_index_pkey`,
        `${RUN}_open_index_status_id`,
        `${RUN}_open_meta`, // an unfinished import's mark (issue 56)
        `${RUN}_open_meta_pkey`,
        `${RUN}_open_rate`, // the rate limits' counts (issue 47)
        `${RUN}_open_rate_pkey`,
        `${RUN}_open_values`,
        `${RUN}_open_values_pkey`,
      ],
    );
  });
}

s(
  "openStorage: without the driver packages the library and memory work, and each backend names the package to install",
  async () => {
    const script = fileURLToPath(new URL("./no-drivers.ts", import.meta.url));
    const hide = fileURLToPath(new URL("./hide-drivers.mjs", import.meta.url));
    const specs = [`sqlite:${join(dir, "c.db")}`, "redis://127.0.0.1:6379", "postgres://127.0.0.1:5432/test"];
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--import", hide, script, ...specs],
      {
        timeout: 30_000,
      },
    );
    const result = JSON.parse(stdout) as { memory: string; errors: Record<string, string> };
    assert.is(result.memory, "Rex");
    for (const [spec, pkg] of [
      [specs[0], "@keyv/sqlite"],
      [specs[1], "@keyv/redis"],
      [specs[2], "@keyv/postgres"],
    ] as const) {
      assert.is(
        result.errors[spec as string],
        `StorageConfigError: the ${pkg.slice(6)} storage needs the optional package ${pkg}, which is not installed: run npm install ${pkg}`,
      );
    }
  },
);

s.run();
