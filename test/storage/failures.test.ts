/**
 * lib/storage/failures.ts: the one place that tells an outage (503, counted by the breaker) from
 * an invalid record (that request's 500, never counted), and reports invalid records once per key
 * per minute. Errors here are shaped as each driver makes them.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createPetStore, isPetStoreError } from "../../lib/index.ts";
import type { BreakerObservation } from "../../lib/observe.ts";
import { InvalidRecordError, reasonOf, reportRecordsOnce, storageFailure } from "../../lib/storage/failures.ts";
import type { PetStorage } from "../../lib/storage/port.ts";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

const OUTAGES: [string, unknown][] = [
  ["a refused connection", withCode("connect ECONNREFUSED 127.0.0.1:6379", "ECONNREFUSED")],
  ["a reset connection", withCode("read ECONNRESET", "ECONNRESET")],
  ["node-redis closed", Object.assign(new Error("The client is closed"), { name: "ClientClosedError" })],
  ["Redis loading", new Error("LOADING Redis is loading the dataset in memory")],
  ["Redis read-only", new Error("READONLY You can't write against a read only replica.")],
  ["Redis out of memory", new Error("OOM command not allowed when used memory > 'maxmemory'.")],
  ["Redis busy with a script", new Error("BUSY Redis is busy running a script.")],
  ["Redis cluster down", new Error("CLUSTERDOWN The cluster is down")],
  ["SQLite busy", withCode("SQLITE_BUSY: database is locked", "SQLITE_BUSY")],
  ["SQLite I/O", withCode("SQLITE_IOERR: disk I/O error", "SQLITE_IOERR")],
  ["SQLite full", withCode("SQLITE_FULL: database or disk is full", "SQLITE_FULL")],
  ["SQLite not a database", withCode("SQLITE_NOTADB: file is not a database", "SQLITE_NOTADB")],
  ["SQLite table gone", withCode("SQLITE_ERROR: no such table: t_index", "SQLITE_ERROR")],
  ["Postgres shut down", withCode("terminating connection due to administrator command", "57P01")],
  ["Postgres statement time-out", withCode("canceling statement due to statement timeout", "57014")],
  ["Postgres connection", withCode("connection failure", "08006")],
  ["Postgres disk full", withCode("could not extend file", "53100")],
  ["Postgres read-only", withCode("cannot execute INSERT in a read-only transaction", "25006")],
  ["pg's lost connection", new Error("Connection terminated unexpectedly")],
  ["an error of unknown kind", new Error("something else")],
];

const BAD_DATA: [string, unknown][] = [
  ["Redis wrong type", new Error("WRONGTYPE Operation against a key holding the wrong kind of value")],
  ["Redis not an integer", new Error("ERR value is not an integer or out of range")],
  ["Redis script on a bad value", new Error("ERR user_script:2: attempt to compare number with nil script: 77")],
  ["a JSON text that does not parse", new SyntaxError(`Unexpected token 'S', "Secret" is not valid JSON`)],
  ["a field of the wrong type", new TypeError("Cannot read properties of null (reading 'id')")],
  ["SQLite JSON of a BLOB", withCode("SQLITE_ERROR: JSON cannot hold BLOB values", "SQLITE_ERROR")],
  ["SQLite malformed JSON", withCode("SQLITE_ERROR: malformed JSON", "SQLITE_ERROR")],
  ["SQLite mismatch", withCode("SQLITE_MISMATCH: datatype mismatch", "SQLITE_MISMATCH")],
  ["Postgres bad JSON text", withCode("invalid input syntax for type json", "22P02")],
  ["Postgres out of range", withCode("value out of range for type bigint", "22003")],
];

test("storageFailure: a failure to reach or use the backend is 503 storage_unavailable, with the error as cause", () => {
  for (const [what, error] of OUTAGES) {
    const failure = storageFailure(error, "redis");
    assert.is(failure.code, "storage_unavailable", what);
    assert.is(failure.cause, error, what);
  }
});

test("storageFailure: a value the backend holds in a bad form is 500 internal_error, an InvalidRecordError with backend, key and reason", () => {
  for (const [what, error] of BAD_DATA) {
    const failure = storageFailure(error, "sqlite", "pets:7");
    assert.is(failure.code, "internal_error", what);
    assert.instance(failure.cause, InvalidRecordError, what);
    const record = failure.cause as InvalidRecordError;
    assert.is(record.backend, "sqlite");
    assert.is(record.key, "pets:7");
    assert.ok(record.reason.length > 0 && record.reason.length <= 161, what);
  }
});

test("reasonOf: a JSON parse error is 'not valid JSON', never the text it quotes", () => {
  assert.is(reasonOf(new SyntaxError(`Unexpected token 'S', "Secret" is not valid JSON`)), "not valid JSON");
  assert.is(reasonOf(new Error(`WRONGTYPE x\nsecond line`)), "WRONGTYPE x");
  assert.is(reasonOf(new Error("y".repeat(500))).length, 161);
});

test("reportRecordsOnce: an invalid record is reported once per backend and key per minute; other errors every time", () => {
  const seen: unknown[] = [];
  const report = reportRecordsOnce((error) => seen.push(error));
  const bad = (key: string) => storageFailure(new Error("WRONGTYPE x"), "redis", key);
  for (let i = 0; i < 5; i++) report(bad("a"));
  report(bad("b"));
  const other = new Error("boom");
  report(other);
  report(other);
  assert.is(seen.length, 4);
  assert.equal(
    seen.slice(0, 2).map((e) => (isPetStoreError(e) ? (e.cause as InvalidRecordError).key : "")),
    ["a", "b"],
  );
});

/** A storage whose every call rejects with `error`. */
function failingStorage(error: unknown): PetStorage {
  const fail = () => Promise.reject(error);
  return { kind: "redis", create: fail, get: fail, list: fail, ping: fail, close: async () => {} };
}

test("breaker: bad data never opens it; an outage does, and its cause (credentials taken out) is told", async () => {
  const changes: BreakerObservation[] = [];
  const onChange = (change: BreakerObservation) => changes.push(change);
  const data = createPetStore({
    storage: failingStorage(new Error("WRONGTYPE Operation against a key holding the wrong kind of value")),
    auth: ["k"],
    onError: () => {},
    breaker: { failures: 2, onChange },
  });
  for (let i = 0; i < 10; i++) await data.getPet(1).catch(() => {});
  assert.equal(changes, []);
  const down = createPetStore({
    storage: failingStorage(withCode("connect ECONNREFUSED redis://user:hunter2@10.0.0.1:6379", "ECONNREFUSED")),
    auth: ["k"],
    onError: () => {},
    breaker: { failures: 2, onChange },
  });
  for (let i = 0; i < 2; i++) await down.getPet(1).catch(() => {});
  assert.is(changes.length, 1);
  assert.is(changes[0]?.state, "open");
  assert.match(String(changes[0]?.cause), /ECONNREFUSED/);
  assert.not.match(String(changes[0]?.cause), /hunter2/);
});

test.run();
