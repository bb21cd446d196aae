/**
 * One Postgres query on a checked-out connection (lib/storage/postgres/read-timeout.ts): answered
 * once, whatever comes first (the answer, the query's error, the connection's error, the read
 * time-out); a connection that failed or never answered is destroyed when it goes back to the
 * pool. test/storage/postgres/outage.test.ts shows the same on a real server behind a frozen path.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PgResult, RawClient } from "../../../lib/storage/postgres/read-timeout.ts";
import { sendQuery } from "../../../lib/storage/postgres/read-timeout.ts";

const s = suite("storage: postgres queries with a read time-out");

/** A client that records what it was asked and lets the test answer. */
function fakeClient() {
  let answer: ((error: Error | null, result: PgResult) => void) | undefined;
  let onError: ((error: Error) => void) | undefined;
  const released: (Error | undefined)[] = [];
  const client: RawClient = {
    query(_sql, _params, callback) {
      answer = callback;
    },
    release(error) {
      released.push(error);
    },
    on() {
      throw new Error("sendQuery listens with once()");
    },
    once(_event, listener) {
      onError = listener;
    },
    removeListener(_event, listener) {
      if (onError === listener) onError = undefined;
    },
  };
  return {
    client,
    released,
    answer: (error: Error | null, result: PgResult) => answer?.(error, result),
    fail: (error: Error) => onError?.(error),
    listening: () => onError !== undefined,
  };
}

/** sendQuery's outcomes, in order. */
function send(client: RawClient, ms: number, releasing = true) {
  const outcomes: { error: Error | undefined; result: PgResult | undefined }[] = [];
  sendQuery(client, "SELECT 1", [], ms, releasing, (error, result) => outcomes.push({ error, result }));
  return outcomes;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ROWS: PgResult = { rows: [{ id: "1" }] };

s("the answer is handed on once, the connection goes back whole and nothing listens any more", async () => {
  const fake = fakeClient();
  const outcomes = send(fake.client, 50);
  assert.ok(fake.listening(), "a lost connection is heard while the query waits");
  fake.answer(null, ROWS);
  await sleep(80); // past the time-out: it was cleared
  assert.equal(outcomes, [{ error: undefined, result: ROWS }]);
  assert.equal(fake.released, [undefined]);
  assert.not.ok(fake.listening());
});

s(
  "no answer in time: a read time-out naming the milliseconds, the connection destroyed, a late answer ignored",
  async () => {
    const fake = fakeClient();
    const outcomes = send(fake.client, 20);
    await sleep(60);
    assert.is(outcomes.length, 1);
    assert.match(String(outcomes[0]?.error?.message), /Query read timeout: no answer within 20 ms/);
    assert.is(fake.released.length, 1);
    assert.instance(fake.released[0], Error, "released with its error: pg-pool destroys the connection");
    fake.answer(null, ROWS);
    assert.is(outcomes.length, 1, "the late answer is dropped");
    assert.is(fake.released.length, 1);
  },
);

s("the query's own error: handed on, the connection destroyed", () => {
  const fake = fakeClient();
  const outcomes = send(fake.client, 1000);
  const refused = Object.assign(new Error("duplicate key"), { code: "23505" });
  fake.answer(refused, { rows: [] });
  assert.is(outcomes[0]?.error, refused);
  assert.equal(fake.released, [refused]);
});

s("the connection lost while waiting: its error handed on once, the connection destroyed", () => {
  const fake = fakeClient();
  const outcomes = send(fake.client, 1000);
  const lost = new Error("Connection terminated unexpectedly");
  fake.fail(lost);
  fake.answer(lost, { rows: [] }); // pg then fails the query as well
  assert.equal(
    outcomes.map((outcome) => outcome.error),
    [lost],
  );
  assert.equal(fake.released, [lost]);
});

s("a connection of a transaction is not released by its queries", async () => {
  const fake = fakeClient();
  const answered = send(fake.client, 1000, false);
  fake.answer(null, ROWS);
  const timedOut = send(fake.client, 10, false);
  await sleep(40);
  assert.equal(answered, [{ error: undefined, result: ROWS }]);
  assert.match(String(timedOut[0]?.error?.message), /read timeout/);
  assert.equal(fake.released, []);
});

s.run();
