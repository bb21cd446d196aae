/**
 * The baselines of B1-B4, in a child process: a bare node:http server doing the least the same
 * answer needs on the same engine, with the same driver, on the same data (the tables or keys the
 * library wrote, BENCH_LOCATION). argv[2] is "list" or "create".
 *   - list: checks the bearer header, reads the page in one round trip (Redis: one EVALSHA of
 *     ZRANGEBYSCORE + MGET; SQL: one prepared statement joining the index to Keyv's values, one
 *     row more than the page to know whether another follows), and answers the stored texts as
 *     they are (Keyv's `{"value":…}` cut to the pet), with the headers of ours (BENCH_REFERENCE);
 *   - create: checks the bearer header, reads and JSON.parses the body, and writes the pet in the
 *     minimal atomic step (Redis: one script of INCR, SET and two ZADD; Postgres: one prepared
 *     statement; SQLite: one BEGIN IMMEDIATE transaction of prepared statements, one at a time in
 *     this process), then answers 201 as ours does.
 *   - list-least (SQLite, B5): the least a page needs from any layout: a table of its own made
 *     at start from the same pets, `(id INTEGER PRIMARY KEY, pet TEXT)` holding each pet's JSON,
 *     and one indexed range read of it, the texts joined as they are.
 *   - page (P1-P3): the very reads the store makes for the page, on the same layout, and nothing
 *     else: SQLite's one-row range read of the served texts (sqlite/reads.ts), Redis's ZRANGEBYSCORE
 *     with the MGET of the ids it read last time in the same round trip (redis/page-guess.ts), and
 *     Postgres's one prepared statement of ids and values (postgres/index.ts); the texts are
 *     written as they are. What is left between the store and this is the store's own work.
 * SQLite is read with `sqlite3`, the driver under @keyv/sqlite, with the pragmas the library sets.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { requireFromDriver } from "../../lib/storage/driver.ts";
import type { Location } from "../backends.ts";
import { exitWithParent, tellParent } from "../child.ts";
import { redisClient } from "../drivers.ts";

const mode = process.argv[2];
const authorization = `Bearer ${process.env.BENCH_KEY ?? "bench-key"}`;
const JSON_TYPE = "application/json; charset=utf-8";
const location = JSON.parse(process.env.BENCH_LOCATION ?? "{}") as Location;
const LIMIT = 20;
/** Keyv's text is `{"value":` + the pet + `}`. */
const pet = (stored: string) => stored.slice(9, -1);

interface Engine {
  /** The stored texts of the first `limit` pets. */
  page(limit: number): Promise<string[]>;
  /** The pet texts of the first `limit` pets, from a table of (id, pet JSON) only (SQLite). */
  leastPage?(limit: number): Promise<string[]>;
  /** The pet texts of the first `limit` pets, read as the store reads them (P1-P3). */
  samePage(limit: number): Promise<string[]>;
  /** Writes a pet whose Keyv text is head + id + tail; resolves its id. */
  create(head: string, tail: string, status: string): Promise<number>;
  close(): Promise<void>;
}

async function redisEngine(url: string, ns: string): Promise<Engine> {
  const client = await redisClient(url);
  const pageSha = await client.scriptLoad(
    `local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(0', '+inf', 'LIMIT', 0, ARGV[1])
     local keys = {}
     for i = 1, #ids do keys[i] = ARGV[2] .. ids[i] end
     if #keys == 0 then return {} end
     return redis.call('MGET', unpack(keys))`,
  );
  const createSha = await client.scriptLoad(
    `local id = redis.call('INCR', KEYS[1])
     redis.call('SET', ARGV[3] .. id, ARGV[1] .. id .. ARGV[2])
     redis.call('ZADD', KEYS[2], id, id)
     redis.call('ZADD', KEYS[3], id, id)
     return id`,
  );
  // The store's page: the index range, and in the same round trip the values of the ids it read
  // last time; read again only when they were not the ones.
  let lastIds: string[] = [];
  const valuesOf = (ids: string[]) => client.mGet(ids.map((id) => `${ns}::${id}`));
  const samePage = async (limit: number) => {
    const guessed = lastIds;
    const [ids, texts] = await Promise.all([
      client.zRangeByScore(`${ns}:ids`, "(0", "+inf", { LIMIT: { offset: 0, count: limit } }),
      guessed.length === 0 ? undefined : valuesOf(guessed),
    ]);
    const same = texts !== undefined && ids.length === guessed.length && ids.every((id, i) => id === guessed[i]);
    lastIds = ids;
    return ((same ? texts : await valuesOf(ids)) as string[]).map(pet);
  };
  return {
    samePage,
    page: async (limit) =>
      (await client.evalSha(pageSha, { keys: [`${ns}:ids`], arguments: [String(limit), `${ns}::`] })) as string[],
    create: async (head, tail, status) =>
      Number(
        await client.evalSha(createSha, {
          keys: [`${ns}:seq`, `${ns}:ids`, `${ns}:ids:${status}`],
          arguments: [head, tail, `${ns}::`],
        }),
      ),
    close: async () => client.destroy(),
  };
}

interface PgPool {
  query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}

async function postgresEngine(url: string, t: string): Promise<Engine> {
  const pg = requireFromDriver<{ Pool: new (c: object) => PgPool }>("@keyv/postgres", "pg", "postgres");
  // The library's pool size by default.
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const page = `SELECT v.value FROM ${t}_index i JOIN ${t}_values v ON v.key = 'pets:' || i.id WHERE i.id > 0 ORDER BY i.id LIMIT $1`;
  const create = `WITH made AS (SELECT nextval('${t}_id_seq') AS id),
    val AS (INSERT INTO ${t}_values (key, value) SELECT 'pets:' || id, $1::text || id || $2::text FROM made),
    idx AS (INSERT INTO ${t}_index (id, status) SELECT id, $3 FROM made)
    SELECT id FROM made`;
  // The store's statement (postgres/index.ts): the limit written in, the cursor a parameter.
  const same = `SELECT i.id, (SELECT v.value FROM ${t}_values v WHERE v.key = 'pets:' || i.id) AS value FROM ${t}_index i WHERE i.id > $1 ORDER BY i.id LIMIT ${LIMIT + 1}`;
  return {
    samePage: async () =>
      (await pool.query({ name: "same", text: same, values: [0] })).rows.map((r) => pet(r.value as string)),
    page: async (limit) =>
      (await pool.query({ name: "page", text: page, values: [limit] })).rows.map((r) => r.value as string),
    create: async (head, tail, status) =>
      Number((await pool.query({ name: "create", text: create, values: [head, tail, status] })).rows[0]?.id),
    close: () => pool.end(),
  };
}

type Sqlite3 = typeof import("sqlite3");
type Row = Record<string, unknown>;

async function sqliteEngine(path: string, t: string): Promise<Engine> {
  const sqlite3 = requireFromDriver<Sqlite3>("@keyv/sqlite", "sqlite3", "sqlite");
  const db = await new Promise<import("sqlite3").Database>((resolve, reject) => {
    const opened = new sqlite3.Database(path, (error) => (error ? reject(error) : resolve(opened)));
  });
  db.configure("busyTimeout", 30_000);
  const run = (sql: string) => new Promise<void>((resolve, reject) => db.run(sql, (e) => (e ? reject(e) : resolve())));
  // The library's settings of its connection.
  await run("PRAGMA synchronous = NORMAL");
  await run(`PRAGMA mmap_size = ${256 * 1024 * 1024}`);
  const prepared = (sql: string) => {
    const statement = db.prepare(sql);
    return (params: unknown[]) =>
      new Promise<Row[]>((resolve, reject) =>
        statement.all(params, (e: Error | null, rows: Row[]) => (e ? reject(e) : resolve(rows))),
      );
  };
  const page = prepared(
    `SELECT v.value FROM ${t}_index i JOIN ${t}_values v ON v.key = 'pets:' || i.id WHERE i.id > 0 ORDER BY i.id LIMIT ?`,
  );
  const begin = prepared("BEGIN IMMEDIATE");
  const commit = prepared("COMMIT");
  const next = prepared(`UPDATE ${t}_seq SET value = value + 1 WHERE id = 1 RETURNING value AS id`);
  const value = prepared(`INSERT INTO ${t}_values (key, value) VALUES (?, ?)`);
  const index = prepared(`INSERT INTO ${t}_index (id, status) VALUES (?, ?)`);
  // B5's table: each pet's JSON (Keyv's text without its envelope) by id, nothing else.
  await run(`CREATE TABLE IF NOT EXISTS ${t}_least (id INTEGER PRIMARY KEY, pet TEXT NOT NULL)`);
  await run(
    `INSERT OR IGNORE INTO ${t}_least (id, pet) SELECT i.id, substr(v.value, 10, length(v.value) - 10) FROM ${t}_index i JOIN ${t}_values v ON v.key = 'pets:' || i.id`,
  );
  const least = prepared(`SELECT pet FROM ${t}_least WHERE id > 0 ORDER BY id LIMIT ?`);
  // The store's page (sqlite/reads.ts): one row of the served texts joined by line feeds, on a
  // read-only connection of its own with the same pragmas.
  const reader = await new Promise<import("sqlite3").Database>((resolve, reject) => {
    const opened = new sqlite3.Database(path, sqlite3.OPEN_READONLY | sqlite3.OPEN_FULLMUTEX, (error) =>
      error ? reject(error) : resolve(opened),
    );
  });
  reader.configure("busyTimeout", 30_000);
  await new Promise<void>((resolve, reject) =>
    reader.run(`PRAGMA mmap_size = ${256 * 1024 * 1024}`, (e) => (e ? reject(e) : resolve())),
  );
  const petOrValue = `CASE WHEN i.pet IS NOT NULL THEN i.pet ELSE json_array(i.id, (SELECT CASE typeof(v.value) WHEN 'text' THEN v.value END FROM ${t}_values v WHERE v.key = 'pets:' || i.id)) END AS pet`;
  const sameStatement = reader.prepare(
    `SELECT count(*) AS n, group_concat(pet, char(10)) AS pets FROM (SELECT ${petOrValue} FROM ${t}_index i WHERE i.id > ? ORDER BY i.id LIMIT ?)`,
  );
  const samePage = (limit: number) =>
    new Promise<string[]>((resolve, reject) =>
      sameStatement.all([0, limit], (e: Error | null, rows: Row[]) => {
        if (e) return reject(e);
        const joined = rows[0]?.pets;
        resolve(typeof joined === "string" ? joined.split("\n") : []);
      }),
    );
  let writing: Promise<unknown> = Promise.resolve();
  const write = async (head: string, tail: string, status: string) => {
    await begin([]);
    const id = Number((await next([]))[0]?.id);
    await value([`pets:${id}`, head + id + tail]);
    await index([id, status]);
    await commit([]);
    return id;
  };
  return {
    page: async (limit) => (await page([limit])).map((r) => r.value as string),
    leastPage: async (limit) => (await least([limit])).map((r) => r.pet as string),
    samePage,
    create(head, tail, status) {
      const done = writing.then(() => write(head, tail, status));
      writing = done.catch(() => {});
      return done;
    },
    close: async () => {
      await new Promise<void>((resolve) => sameStatement.finalize(() => resolve()));
      await new Promise<void>((resolve) => reader.close(() => resolve()));
      await new Promise<void>((resolve) => db.close(() => resolve()));
    },
  };
}

function openEngine(): Promise<Engine> {
  switch (location.kind) {
    case "redis":
      return redisEngine(location.url, location.namespace);
    case "postgres":
      return postgresEngine(location.url, location.table);
    case "sqlite":
      return sqliteEngine(location.path, location.table);
    default:
      throw new Error(`bench/servers/engine.ts: BENCH_LOCATION names no shared engine (${location.kind})`);
  }
}

const engine = await openEngine();

function refuse(res: ServerResponse): void {
  res.writeHead(401, { "content-type": JSON_TYPE }).end("{}");
}
function failed(res: ServerResponse): void {
  res.writeHead(503, { "content-type": JSON_TYPE }).end("{}");
}

let handler: (req: IncomingMessage, res: ServerResponse) => void;
if (mode === "list" || mode === "list-least" || mode === "page") {
  const least = engine.leastPage;
  if (mode === "list-least" && least === undefined) throw new Error(`engine list-least is SQLite's only`);
  /** The served texts of the page and one more: the pets' JSON. */
  const readPage =
    mode === "page"
      ? engine.samePage
      : least === undefined || mode === "list"
        ? async (n: number) => (await engine.page(n)).map(pet)
        : least;
  const ref = JSON.parse(process.env.BENCH_REFERENCE ?? "null") as {
    path: string;
    status: number;
    headers: Record<string, string>;
  };
  if (ref === null) throw new Error("engine list needs BENCH_REFERENCE");
  handler = (req, res) => {
    if (req.headers.authorization !== authorization) return refuse(res);
    if (req.method !== "GET" || req.url !== ref.path) {
      res.writeHead(404, { "content-type": JSON_TYPE }).end("{}");
      return;
    }
    readPage(LIMIT + 1).then(
      (texts) => {
        let body = "[";
        const n = Math.min(LIMIT, texts.length);
        for (let i = 0; i < n; i++) body += i === 0 ? (texts[i] as string) : `,${texts[i] as string}`;
        body += "]";
        res.writeHead(ref.status, { ...ref.headers, "x-request-id": randomUUID() });
        res.end(body);
      },
      () => failed(res),
    );
  };
} else if (mode === "create") {
  handler = (req, res) => {
    if (req.headers.authorization !== authorization) return refuse(res);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let input: { name: string; categoryId: number; status?: string };
      try {
        input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        res.writeHead(400, { "content-type": JSON_TYPE }).end("{}");
        return;
      }
      const status = input.status ?? "available";
      const rest = `,"name":${JSON.stringify(input.name)},"categoryId":${input.categoryId},"status":"${status}"}`;
      engine.create('{"value":{"id":', `${rest}}`, status).then(
        (id) => {
          const body = `{"id":${id}${rest}`;
          res.writeHead(201, {
            "content-type": JSON_TYPE,
            "cache-control": "no-store",
            "x-request-id": randomUUID(),
            "content-length": String(Buffer.byteLength(body)),
            "x-content-type-options": "nosniff",
            location: `/v1/pets/${id}`,
          });
          res.end(body);
        },
        () => failed(res),
      );
    });
  };
} else {
  throw new Error(`bench/servers/engine.ts: unknown mode ${JSON.stringify(mode)} (list, list-least, page or create)`);
}

const server = createServer(handler);
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  exitWithParent(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await engine.close();
  });
  tellParent({ type: "ready", port: typeof address === "object" && address ? address.port : 0 });
});
