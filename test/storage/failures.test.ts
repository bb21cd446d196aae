/**
 * lib/storage/failures.ts and the guard: one failure policy. A backend throws InvalidRecordError
 * (naming the key) where it decodes a record or where its driver blames a value by an error code;
 * that is the request's 500 and never counts. Anything else a storage call throws is the backend
 * failing: 503 with Retry-After, counted by the breaker, reported with its error. Errors here are
 * shaped as each driver makes them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createPetStore, isPetStoreError, PetStoreError } from "../../lib/index.ts";
import type { BreakerObservation } from "../../lib/observe.ts";
import { blamed, InvalidRecordError, reportFailuresOnce, storageFailure } from "../../lib/storage/failures.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import { postgresBlamesValue } from "../../lib/storage/postgres/connection.ts";
import { redisBlamesValue } from "../../lib/storage/redis/scripts.ts";
import { sqliteBlamesValue } from "../../lib/storage/sqlite/connection.ts";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

/** An error reply as node-redis makes it (`SimpleError extends ErrorReply extends Error`). */
class ErrorReply extends Error {}
class SimpleError extends ErrorReply {}

const OUTAGES: [string, unknown][] = [
  ["a refused connection", withCode("connect ECONNREFUSED 127.0.0.1:6379", "ECONNREFUSED")],
  ["a reset connection", withCode("read ECONNRESET", "ECONNRESET")],
  ["node-redis closed", Object.assign(new Error("The client is closed"), { name: "ClientClosedError" })],
  ["Redis loading", new SimpleError("LOADING Redis is loading the dataset in memory")],
  ["Redis read-only", new SimpleError("READONLY You can't write against a read only replica.")],
  ["Redis out of memory", new SimpleError("OOM command not allowed when used memory > 'maxmemory'.")],
  ["Redis cluster down", new SimpleError("CLUSTERDOWN The cluster is down")],
  ["SQLite busy", withCode("SQLITE_BUSY: database is locked", "SQLITE_BUSY")],
  ["SQLite I/O", withCode("SQLITE_IOERR: disk I/O error", "SQLITE_IOERR")],
  ["SQLite table gone", withCode("SQLITE_ERROR: no such table: t_index", "SQLITE_ERROR")],
  ["SQLite, a message that speaks of JSON", withCode("SQLITE_ERROR: malformed JSON", "SQLITE_ERROR")],
  ["Postgres shut down", withCode("terminating connection due to administrator command", "57P01")],
  ["Postgres statement time-out", withCode("canceling statement due to statement timeout", "57014")],
  ["pg's lost connection", new Error("Connection terminated unexpectedly")],
  ["a custom storage's transport", new TypeError("fetch failed")],
  ["a bug in storage code", new TypeError("Cannot read properties of undefined (reading 'id')")],
  ["a JSON text a storage could not parse itself", new SyntaxError("Unexpected token 'S' is not valid JSON")],
  ["a RangeError", new RangeError("Invalid array length")],
  ["a message that names a Redis code, from no reply", new Error("WRONGTYPE Operation against a key")],
  ["a string thrown", "down"],
];

test("storageFailure: anything a storage call throws but an invalid record is 503 storage_unavailable, the error its cause", () => {
  for (const [what, error] of OUTAGES) {
    const failure = storageFailure(error);
    assert.is(failure.code, "storage_unavailable", what);
    assert.is(failure.cause, error, what);
  }
});

test("storageFailure: an InvalidRecordError is that request's 500 internal_error; a PetStoreError passes as it is", () => {
  const record = new InvalidRecordError("redis", "shop::7", "not valid JSON");
  const failure = storageFailure(record);
  assert.is(failure.code, "internal_error");
  assert.is(failure.cause, record);
  const own = new PetStoreError("pet_not_found");
  assert.is(storageFailure(own), own);
});

test("blamed: each backend blames a value by its driver's error code only, naming the key it asked for", () => {
  const cases: [string, unknown, (error: unknown) => string | undefined, boolean][] = [
    [
      "Redis WRONGTYPE reply",
      new SimpleError("WRONGTYPE Operation against a key holding the wrong kind of value"),
      redisBlamesValue,
      true,
    ],
    [
      "Redis WRONGTYPE from a script",
      new SimpleError("WRONGTYPE Operation against a key script: 1a2b, on @user_script:1."),
      redisBlamesValue,
      true,
    ],
    ["Redis ERR reply", new SimpleError("ERR value is not an integer or out of range"), redisBlamesValue, false],
    ["Redis text in a plain error", new Error("WRONGTYPE x"), redisBlamesValue, false],
    ["SQLite mismatch", withCode("SQLITE_MISMATCH: datatype mismatch", "SQLITE_MISMATCH"), sqliteBlamesValue, true],
    ["SQLite too big", withCode("SQLITE_TOOBIG: string or blob too big", "SQLITE_TOOBIG"), sqliteBlamesValue, true],
    ["SQLite error", withCode("SQLITE_ERROR: JSON cannot hold BLOB values", "SQLITE_ERROR"), sqliteBlamesValue, false],
    ["Postgres 22P02", withCode("invalid input syntax for type json", "22P02"), postgresBlamesValue, true],
    ["Postgres 23502", withCode("null value in column", "23502"), postgresBlamesValue, true],
    ["Postgres 57P01", withCode("terminating connection", "57P01"), postgresBlamesValue, false],
    ["Postgres 08006", withCode("connection failure", "08006"), postgresBlamesValue, false],
  ];
  for (const [what, error, blamesValue, blames] of cases) {
    const result = blamed(error, "backend", "the-key", blamesValue);
    if (blames) {
      assert.instance(result, InvalidRecordError, what);
      const record = result as InvalidRecordError;
      assert.is(record.key, "the-key", what);
      assert.is(record.backend, "backend", what);
      assert.not.ok(record.reason.includes("Operation against"), `${what}: the reason is the code, not the message`);
    } else assert.is(result, error, what);
  }
});

test("reportFailuresOnce: an invalid record once per key a minute, an outage once per distinct error a minute, the core's errors every time", () => {
  const seen: unknown[] = [];
  const report = reportFailuresOnce((error) => seen.push(error));
  const bad = (key: string) => storageFailure(new InvalidRecordError("redis", key, "not valid JSON"));
  for (let i = 0; i < 5; i++) report(bad("a"));
  report(bad("b"));
  const refused = () => storageFailure(withCode("connect ECONNREFUSED 127.0.0.1:6379", "ECONNREFUSED"));
  for (let i = 0; i < 5; i++) report(refused());
  report(storageFailure(new TypeError("fetch failed")));
  const other = new Error("boom");
  report(other);
  report(other);
  assert.equal(
    seen.map((e) => (isPetStoreError(e) ? `${e.code} ${String((e.cause as Error).message)}` : String(e))),
    [
      "internal_error redis storage: the record a is invalid: not valid JSON",
      "internal_error redis storage: the record b is invalid: not valid JSON",
      "storage_unavailable connect ECONNREFUSED 127.0.0.1:6379",
      "storage_unavailable fetch failed",
      "Error: boom",
      "Error: boom",
    ],
  );
});

/** A storage whose every call rejects with `error`. */
function failingStorage(error: unknown): PetStorage {
  const fail = () => Promise.reject(error);
  return { kind: "custom", create: fail, get: fail, list: fail, ping: fail, close: async () => {} };
}

test("breaker: an invalid record never opens it; an error of any other kind does, and its cause (credentials taken out) is told", async () => {
  const changes: BreakerObservation[] = [];
  const onChange = (change: BreakerObservation) => changes.push(change);
  const data = createPetStore({
    storage: failingStorage(new InvalidRecordError("custom", "pets:1", "not valid JSON")),
    auth: ["k"],
    onError: () => {},
    breaker: { failures: 2, onChange },
  });
  for (let i = 0; i < 10; i++) await data.getPet(1).catch(() => {});
  assert.equal(changes, []);
  for (const error of [
    withCode("connect ECONNREFUSED redis://user:hunter2@10.0.0.1:6379", "ECONNREFUSED"),
    new TypeError("Cannot read properties of null (reading 'id')"),
  ]) {
    changes.length = 0;
    const down = createPetStore({
      storage: failingStorage(error),
      auth: ["k"],
      onError: () => {},
      breaker: { failures: 2, onChange },
    });
    for (let i = 0; i < 2; i++) await down.getPet(1).catch(() => {});
    assert.is(changes.length, 1);
    assert.is(changes[0]?.state, "open");
    assert.not.match(String(changes[0]?.cause), /hunter2/);
  }
});

test("a custom storage over fetch whose server is down: 503 with Retry-After, the breaker opens, not ready, the TypeError reported with its stack", async () => {
  // A port that refuses: a server that listened once and closed.
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
  const call = async () => {
    const response = await fetch(`http://127.0.0.1:${port}/pets`);
    return (await response.json()) as never;
  };
  const storage: PetStorage = { kind: "http", create: call, get: call, list: call, ping: call, close: async () => {} };
  const reports: unknown[] = [];
  const changes: BreakerObservation[] = [];
  const store = createPetStore({
    storage,
    auth: ["k"],
    onError: (error) => reports.push(error),
    breaker: { failures: 3, onChange: (change) => changes.push(change) },
  });
  const statuses: number[] = [];
  for (let i = 0; i < 30; i++) {
    const answer = await store.handle({ method: "GET", path: "/v1/pets", headers: { authorization: "Bearer k" } });
    statuses.push(answer.status);
    assert.ok(answer.headers["retry-after"], "Retry-After on every 503");
    assert.is(JSON.parse(String(answer.body)).code, "storage_unavailable");
  }
  assert.equal(new Set(statuses), new Set([503]));
  assert.equal(
    changes.map((c) => c.state),
    ["open"],
  );
  assert.is(await store.ready(), false);
  const outages = reports.filter((r) => isPetStoreError(r, "storage_unavailable"));
  assert.is(outages.length, 1, "the same error reported once");
  const cause = (outages[0] as PetStoreError).cause as Error;
  assert.instance(cause, TypeError);
  assert.match(String(cause.stack), /fetch failed/);
  assert.not.ok(
    reports.some(
      (r) => r instanceof InvalidRecordError || (isPetStoreError(r) && r.cause instanceof InvalidRecordError),
    ),
    "never an invalid record",
  );
  await store.close();
});

test("an error of the core outside any storage call is 500 internal_error, reported every time", async () => {
  const reports: unknown[] = [];
  const store = createPetStore({
    auth: () => {
      throw new TypeError("a verifier's bug");
    },
    onError: (error) => reports.push(error),
  });
  for (let i = 0; i < 3; i++) {
    const answer = await store.handle({ method: "GET", path: "/v1/pets", headers: { authorization: "Bearer k" } });
    assert.is(answer.status, 500);
  }
  assert.is(reports.length, 3);
});

test("nothing under lib/storage/ calls a thrown TypeError or RangeError a bad record, or reads a message without regard to case", () => {
  const root = new URL("../../lib/storage/", import.meta.url).pathname;
  const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"));
  assert.ok(files.length > 20);
  for (const file of files) {
    const source = readFileSync(join(root, file), "utf8");
    assert.not.match(source, /instanceof (TypeError|RangeError|SyntaxError)/, file);
    assert.not.match(source, /\/[^/\n]*(JSON|malformed|mismatch)[^/\n]*\/i/, file);
    assert.not.match(source, /message\)?\.(includes|match|startsWith)\(/, file);
  }
});

test.run();
