/**
 * Keys never reach the logs: the standalone server runs as a child process at the most verbose
 * level while right keys, wrong keys and near misses are sent in every place a client might put
 * them; then its whole stdout and stderr are searched for every 10-character piece of every key.
 */
import { randomBytes } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Child } from "../support/server-child.ts";
import { spawnServer, startedUrl } from "../support/server-child.ts";

const children: Child[] = [];
test.after.each(async () => {
  for (const child of children.splice(0)) await child.stop();
});

/** A random key in base64url: letters of both cases, so its pieces cannot match hex request ids. */
const newKey = () => randomBytes(24).toString("base64url");

/** Every `n`-character piece of `key`. */
function pieces(key: string, n = 10): string[] {
  const out: string[] = [];
  for (let i = 0; i + n <= key.length; i++) out.push(key.slice(i, i + n));
  return out;
}

function leaks(text: string, keys: string[]): string[] {
  return keys.flatMap((key) =>
    pieces(key)
      .filter((p) => text.includes(p))
      .map((p) => `${key.slice(0, 4)}…: "${p}"`),
  );
}

/** Sends every way of presenting `keys` (right or wrong) that a client might try. */
async function sendEverywhere(base: URL, keys: string[]): Promise<number[]> {
  const statuses: number[] = [];
  const pets = new URL("pets", `${base.href}/`).href;
  for (const key of keys) {
    const attempts: [string, RequestInit][] = [
      [pets, { headers: { authorization: `Bearer ${key}` } }],
      [pets, { headers: { authorization: `bearer ${key}` } }],
      [pets, { headers: { authorization: `Basic ${Buffer.from(`u:${key}`).toString("base64")}` } }],
      [pets, { headers: { authorization: key } }],
      [pets, { headers: { authorization: `Bearer ${key}x` } }],
      [pets, { headers: { authorization: `Bearer ${key.slice(0, -1)}` } }],
      [`${pets}?api_key=${key}&access_token=${key}`, {}],
      [`${pets}/1?key=${key}`, { headers: { authorization: `Bearer ${key}` } }],
      [pets, { headers: { "x-api-key": key, cookie: `token=${key}` } }],
      [
        pets,
        {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ name: "Rex", categoryId: 1 }),
        },
      ],
      [
        pets,
        {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ name: "Rex", categoryId: 1, [key]: key }),
        },
      ],
      [pets, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "text/plain" }, body: key }],
    ];
    for (const [url, init] of attempts) statuses.push((await fetch(url, init)).status);
  }
  return statuses;
}

test("logs: configured keys, wrong keys and near misses never appear, whole or in part, in the server's stdout or stderr (LOG_LEVEL=trace)", async () => {
  const keys = [newKey(), newKey()];
  const wrong = [newKey(), `${keys[0]}-suffix`, (keys[1] as string).slice(0, -2)];
  const child = spawnServer({ PORT: "0", PETSTORE_API_KEYS: keys.join(","), LOG_LEVEL: "trace" });
  children.push(child);
  const base = await startedUrl(child);
  const statuses = await sendEverywhere(base, [...keys, ...wrong]);
  assert.ok(
    statuses.includes(200) && statuses.includes(201) && statuses.includes(401),
    "right and wrong keys were sent",
  );
  child.process.kill("SIGTERM");
  assert.is(await child.exited(), 0);
  const output = child.stdout() + child.stderr();
  assert.ok(
    output.split("\n").filter((l) => l.includes('"request"')).length >= statuses.length,
    "requests were logged",
  );
  assert.equal(leaks(output, [...keys, ...wrong]), []);
});

test("logs: a generated key is printed at start-up only (its line and the ready curl), never in a log line after it", async () => {
  const child = spawnServer({ PORT: "0", LOG_LEVEL: "trace" });
  children.push(child);
  const line = await child.line(/generated API key/);
  const key = /generated API key for this run: (\S+)/.exec(line)?.[1];
  assert.ok(key !== undefined && key.length >= 20, `a key is printed: ${line}`);
  const base = await startedUrl(child);
  const lastStartLine = await child.line(/^Try it: curl/);
  await sendEverywhere(base, [key as string]);
  child.process.kill("SIGTERM");
  assert.is(await child.exited(), 0);
  const output = child.stdout() + child.stderr();
  assert.is(output.split(key as string).length - 1, 2, "the key appears twice: its line and the ready curl");
  const afterStart = output.slice(output.indexOf(lastStartLine) + lastStartLine.length);
  assert.equal(leaks(afterStart, [key as string]), []);
});

test.run();
