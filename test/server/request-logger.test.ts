import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { METHODS } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { requestIdOf } from "../../lib/request-id.ts";
import { LineWriter } from "../../server/line-writer.ts";
import { createLogger, requestLogger } from "../../server/logger.ts";
import { hundredths } from "../../server/request-line.ts";

test("request log: ms is written as String(Math.round(ms * 100) / 100) would write it", () => {
  const values = [0, 0.001, 0.004, 0.005, 0.0149, 0.015, 0.1, 0.25, 1, 1.1, 1.05, 9.999, 12.34, 99.995, 100, 2047.5];
  for (let i = 0; i < 20_000; i++) values.push(Math.random() * 10 ** (i % 8));
  values.push(21_474_836.47, 21_474_836.48, 1e12, -1, -0.004, Number.NaN, Number.POSITIVE_INFINITY);
  for (const ms of values) assert.is(hundredths(ms), String(Math.round(ms * 100) / 100), `ms = ${ms}`);
});

test("request log: a line is written while info is enabled, none while the level is above it", () => {
  const lines: string[] = [];
  const logger = createLogger("info", { write: (line: string) => void lines.push(line) });
  const log = requestLogger(logger);
  log("POST", "/v1/pets", 201, 0.127, "req-1", false);
  logger.level = "warn";
  log("GET", "/v1/pets", 200, 1, "req-2", false);
  logger.level = "debug";
  log("GET", '/v1/"q"', 404, 2.5, "req-3", true);
  assert.is(lines.length, 2, "the line logged while the level was warn is not written");
  const [first, second] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(
    {
      level: first?.level,
      method: first?.method,
      path: first?.path,
      status: first?.status,
      ms: first?.ms,
      reqId: first?.reqId,
      msg: first?.msg,
    },
    { level: 30, method: "POST", path: "/v1/pets", status: 201, ms: 0.13, reqId: "req-1", msg: "request" },
  );
  assert.equal([second?.path, second?.ms, second?.aborted], ['/v1/"q"', 2.5, true]);
});

test("request log: every method Node's parser accepts and every request id the core gives are written as they are, as valid JSON", () => {
  const lines: string[] = [];
  const log = requestLogger(createLogger("info", { write: (line: string) => void lines.push(line) }));
  const ids = [
    requestIdOf(undefined),
    requestIdOf("client-id_1.2"),
    requestIdOf('evil"id\\'),
    requestIdOf("A".repeat(128)),
  ];
  for (const method of METHODS) for (const id of ids) log(method, '/v1/"odd"\\path', 200, 1, id, false);
  assert.is(lines.length, METHODS.length * ids.length);
  lines.forEach((line, i) => {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    assert.is(parsed.method, METHODS[Math.floor(i / ids.length)]);
    assert.is(parsed.reqId, ids[i % ids.length]);
    assert.is(parsed.path, '/v1/"odd"\\path');
  });
});

test("request log: the server's own writer gets the same bytes as any other stream, whatever the path, id, status and time", async () => {
  const dir = mkdtempSync(join(tmpdir(), "petstore-log-"));
  const file = join(dir, "out.log");
  const fd = openSync(file, "w");
  try {
    const writer = new LineWriter(fd);
    const own = requestLogger(createLogger("info", writer));
    const lines: string[] = [];
    const strings = requestLogger(createLogger("info", { write: (line: string) => void lines.push(line) }));
    const paths = [
      "/v1/pets",
      "/v1/pets/12",
      '/v1/"q"',
      "/v1/a\\b",
      "/v1/caf\u00e9",
      "/v1/\u65e5\u672c",
      "/v1/\u007f",
      "/v1/tab\there",
      "",
    ];
    const ids = [
      requestIdOf(undefined),
      requestIdOf("client-id_1.2"),
      requestIdOf('evil"id\\'),
      requestIdOf("A".repeat(128)),
    ];
    const statuses = [200, 201, 404, 0, 599, 2 ** 31, 1.5];
    const times = [0, 0.004, 0.005, 0.1, 1, 1.05, 12.34, 99.995, 2047.5, 21_474_836.48, 1e12, -1, Number.NaN];
    let n = 0;
    for (const method of ["GET", "POST", "M-SEARCH"]) {
      for (const path of paths) {
        for (const id of ids) {
          const status = statuses[n % statuses.length] as number;
          const ms = times[n % times.length] as number;
          const aborted = n % 5 === 0;
          n++;
          own(method, path, status, ms, id, aborted);
          strings(method, path, status, ms, id, aborted);
        }
      }
    }
    await writer.end();
    const timeless = (text: string) => text.replace(/"time":[0-9]+/g, '"time":0');
    assert.is(timeless(readFileSync(file, "utf8")), timeless(lines.join("")));
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
