/**
 * pg's `query_timeout` without its cost to every page. A query that gets no answer in time fails,
 * and its connection is destroyed when it goes back to the pool, so a frozen server does not keep
 * the pool's connections (what pg's own `query_timeout` does). pg's way wraps each query's callback
 * in a closure that also holds the query, which kept every page's rows alive until the young heap's
 * collections promoted them (figures: docs/shared-backends-performance.md). Here the callback is a
 * closure of this file, which never holds the query.
 */

/** A statement pg prepares once per connection (by `name`) and then only executes. */
export interface PgNamedQuery {
  name: string;
  text: string;
  values: unknown[];
}

export interface PgResult {
  rows: Record<string, unknown>[];
  rowCount?: number | null;
}
type Done = (error: Error | undefined, result?: PgResult) => void;

/** A pg client as pg-pool hands it out. */
export interface RawClient {
  query(
    sql: string | PgNamedQuery,
    params: unknown[] | undefined,
    callback: (error: Error | null, result: PgResult) => void,
  ): void;
  release(error?: Error): void;
  on(event: "error", listener: (error: Error) => void): unknown;
  once(event: "error", listener: (error: Error) => void): unknown;
  removeListener(event: "error", listener: (error: Error) => void): unknown;
}

export interface RawPool {
  connect(callback: (error: Error | null | undefined, client: RawClient) => void): void;
  end(): Promise<void>;
  on(event: "error", listener: (error: Error) => void): unknown;
}

/** The error of a query that got no answer within `ms`. */
export function readTimedOut(ms: number): Error {
  return new Error(`Query read timeout: no answer within ${ms} ms`);
}

/**
 * Sends one query on a checked-out client: `done` is called once, with the answer, the query's
 * error, a lost connection's error, or a read time-out. `releasing`: the client goes back to the
 * pool then (destroyed after an error, as pg-pool's own `query` does).
 */
export function sendQuery(
  client: RawClient,
  sql: string | PgNamedQuery,
  params: unknown[] | undefined,
  ms: number,
  releasing: boolean,
  done: Done,
): void {
  let settled = false;
  const finish = (error: Error | null | undefined, result?: PgResult) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    client.removeListener("error", finish);
    if (releasing) client.release(error ?? undefined);
    done(error ?? undefined, result);
  };
  const timer = setTimeout(() => finish(readTimedOut(ms)), ms);
  // A connection lost while the client is out of the pool emits "error": unheard, it would end the process.
  client.once("error", finish);
  client.query(sql, params, finish);
}
