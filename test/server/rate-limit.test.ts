/**
 * The standalone server's rate limits (PETSTORE_RATE_LIMIT / --rate-limit, contract 1.3): the
 * setting and its errors, the start-up line, 429 past the limit with the headers, another key and
 * the server's own routes unaffected, one warning per caller and window naming its principal
 * (never the key), `petstore_rate_limited_total`, and two workers on one SQLite file counting as one.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { tokenId } from "../../lib/auth/principal.ts";
import { scopeOf } from "../../lib/index.ts";
import { loadConfig } from "../../server/index.ts";
import { type Child, jsonLines, spawnServer, startedUrl } from "../support/server-child.ts";

const KEY = "rate-limit-key-7d1e0a";
const OTHER = "rate-limit-other-key-93b2";
const dir = mkdtempSync(join(tmpdir(), "petstore-rate-"));
const children: Child[] = [];
test.after.each(async () => {
  for (const child of children.splice(0)) await child.stop();
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

function start(env: Record<string, string>, args: string[] = []): Child {
  const child = spawnServer({ PORT: "0", PETSTORE_API_KEYS: `${KEY},${OTHER}`, ...env }, args);
  children.push(child);
  return child;
}

/** One request on a connection of its own (with workers, the primary hands each to the next worker). */
async function send(url: string, key?: string) {
  const headers: Record<string, string> = { connection: "close" };
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  return res;
}

test("config: PETSTORE_RATE_LIMIT (or --rate-limit) is <limit>/<seconds>; off by default; a bad value names the setting", () => {
  const load = (env: Record<string, string>, argv: string[] = []) =>
    loadConfig({ PETSTORE_API_KEYS: "k1", ...env }, argv).config.rateLimit;
  assert.is(load({}), undefined);
  assert.is(load({ PETSTORE_RATE_LIMIT: "" }), undefined);
  assert.equal(load({ PETSTORE_RATE_LIMIT: "600/60" }), { limit: 600, windowSeconds: 60 });
  assert.equal(load({ PETSTORE_RATE_LIMIT: "600/60" }, ["--rate-limit", " 5/1 "]), { limit: 5, windowSeconds: 1 });
  for (const bad of ["600", "600/", "/60", "0/60", "10/0", "10/86401", "10/1.5", "-1/60", "ten/60", "10 / 60"]) {
    assert.throws(
      () => load({ PETSTORE_RATE_LIMIT: bad }),
      (e: unknown) =>
        e instanceof Error &&
        e.message.startsWith(`PETSTORE_RATE_LIMIT must be <limit>/<seconds>`) &&
        e.message.includes(JSON.stringify(bad)),
      bad,
    );
  }
  assert.throws(() => load({}, ["--rate-limit", "x"]), /^--rate-limit must be <limit>\/<seconds>/);
});

test("server: past its limit a key gets 429 rate_limited with the headers; another key and /healthz are not affected; one warning per caller and window, naming its principal and never the key", async () => {
  const child = start({ PETSTORE_RATE_LIMIT: "3/3600", PETSTORE_METRICS_PORT: "0" });
  const url = (await startedUrl(child)).href.replace(/\/$/, "");
  const line = await child.line(/listening on/);
  assert.match(line, /rate limit: 3 per key every 3600 s/);
  const metricsUrl = /metrics: (http:\/\/\S+\/metrics)/.exec(line)?.[1] as string;
  const statuses: number[] = [];
  let refused: Response | undefined;
  for (let i = 0; i < 5; i++) {
    const res = await send(`${url}/pets`, KEY);
    statuses.push(res.status);
    if (res.status === 429) refused ??= res;
    else assert.match(res.headers.get("ratelimit") ?? "", new RegExp(`^"default";r=${2 - i};t=[0-9]+$`));
  }
  assert.equal(statuses, [200, 200, 200, 429, 429]);
  assert.is(refused?.headers.get("ratelimit-policy"), '"default";q=3;w=3600');
  assert.match(refused?.headers.get("retry-after") ?? "", /^[0-9]+$/);
  assert.is((await send(`${url}/pets`, OTHER)).status, 200, "another key has its own count");
  assert.is((await send(`${url}/pets`)).status, 401, "a 401 is neither counted nor refused");
  for (const path of ["/healthz", "/readyz", "/docs", "/v1/openapi.json"]) {
    const own = await send(new URL(path, url).href, KEY);
    assert.ok(own.status !== 429, `${path} is not limited`);
    assert.is(own.headers.get("ratelimit"), null, `${path} is not counted`);
  }
  const scraped = await fetch(metricsUrl);
  assert.is(scraped.status, 200);
  assert.match(await scraped.text(), /^petstore_rate_limited_total 2$/m);
  child.process.kill("SIGTERM");
  assert.is(await child.exited(), 0);
  const warnings = jsonLines(child.stdout()).filter((l) => String(l.msg).startsWith("rate limited"));
  assert.is(warnings.length, 1, "one line per caller and window, however many refusals");
  assert.equal(
    {
      level: warnings[0]?.level,
      principal: warnings[0]?.principal,
      limit: warnings[0]?.limit,
      windowSeconds: warnings[0]?.windowSeconds,
    },
    { level: 40, principal: tokenId(KEY), limit: 3, windowSeconds: 3600 },
  );
  assert.not.ok(child.stdout().includes(KEY), "the key is never logged");
  const refusedLines = jsonLines(child.stdout()).filter((l) => l.msg === "request" && l.status === 429);
  assert.is(refusedLines.length, 2, "each refusal has its request line");
});

test("server: a bad PETSTORE_RATE_LIMIT exits 2 with one line naming it", async () => {
  const child = start({ PETSTORE_RATE_LIMIT: "lots" });
  assert.is(await child.exited(), 2);
  assert.match(child.stderr(), /PETSTORE_RATE_LIMIT must be <limit>\/<seconds>/);
});

test("server: two workers on one SQLite file count a key's requests together", async () => {
  const child = start({ PETSTORE_RATE_LIMIT: "4/3600", PETSTORE_STORAGE: `sqlite:${join(dir, "workers.db")}` }, [
    "--workers",
    "2",
  ]);
  const url = (await startedUrl(child)).href.replace(/\/$/, "");
  const statuses: number[] = [];
  for (let i = 0; i < 10; i++) statuses.push((await send(`${url}/pets`, KEY)).status);
  assert.is(statuses.filter((s) => s === 200).length, 4, `admitted across both workers: ${statuses}`);
  assert.is(statuses.filter((s) => s === 429).length, 6);
});

test("metrics: petstore_rate_limited_total counts refusals, with no label (the server's observer, in process)", async () => {
  const { createMetrics, loadPromClient } = await import("../../server/metrics.ts");
  const metrics = createMetrics(await loadPromClient());
  for (const first of [true, false, false]) {
    metrics.observe({ kind: "rateLimited", scope: scopeOf(KEY), first, limit: 3, windowSeconds: 60 });
  }
  const text = await metrics.registry.metrics();
  assert.match(text, /^petstore_rate_limited_total 3$/m);
  assert.not.ok(text.includes(scopeOf(KEY)), "no scope in the metrics");
  if (spawnSync("promtool", ["--version"], { stdio: "ignore" }).status === 0) {
    const run = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    assert.is(run.status, 0, run.stdout + run.stderr);
  }
});

test.run();
