/**
 * Named, scoped API keys in a keys file (PETSTORE_API_KEYS_FILE): `petstore keys add|list|remove`
 * (the key printed once, alone on the last line; the file holds digests only), and a running
 * server with two workers that takes a new key and drops an old one, on change and on SIGHUP,
 * under steady traffic, without a failed request.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadConfig } from "../../server/config.ts";
import { ROOT } from "../support/program.ts";
import { type Child, jsonLines, spawnServer, startedUrl } from "../support/server-child.ts";

const dir = mkdtempSync(join(tmpdir(), "petstore-keys-"));
let files = 0;
const children: Child[] = [];
test.after.each(async () => {
  for (const child of children.splice(0)) await child.stop();
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** `petstore keys …` as a user runs it. */
function keys(args: string[], env: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, ["--import", "tsx", "server/cli.ts", "keys", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

/** The new key: the last line of `keys add`'s output. */
const lastLine = (out: string) => out.trimEnd().split("\n").at(-1) as string;

test("keys add prints the new key once, alone on the last line; the file holds its SHA-256 and never the key", () => {
  const file = join(dir, `keys-${++files}.json`);
  const added = keys(["add", "shop", "--scopes", "pets:read", "--file", file]);
  assert.is(added.code, 0, added.err);
  const key = lastLine(added.out);
  assert.match(key, /^pets_[A-Za-z0-9_-]{43}$/);
  assert.is(added.out.split(key).length, 2, "printed once");
  const text = readFileSync(file, "utf8");
  assert.not.ok(text.includes(key), "no key in the file");
  const [entry] = JSON.parse(text).keys;
  assert.is(entry.name, "shop");
  assert.equal(entry.scopes, ["pets:read"]);
  assert.match(entry.sha256, /^[0-9a-f]{64}$/);
  assert.is(entry.prefix, key.slice(0, 13));
});

test("keys list shows name, prefix, scopes and age, never a key; PETSTORE_API_KEYS_FILE is the default file", () => {
  const file = join(dir, `keys-${++files}.json`);
  const env = { PETSTORE_API_KEYS_FILE: file };
  const first = lastLine(keys(["add", "shop", "--scopes", "pets:read,pets:write"], env).out);
  const second = lastLine(keys(["add", "shop", "--scopes", "pets:read"], env).out);
  const listed = keys(["list"], env);
  assert.is(listed.code, 0);
  assert.match(listed.out, /^shop\tpets_\S{8}…\tpets:read,pets:write\t0h$/m);
  assert.match(listed.out, /^shop\tpets_\S{8}…\tpets:read\t0h$/m);
  assert.not.ok(listed.out.includes(first) || listed.out.includes(second));
});

test("keys remove takes a key or its prefix and removes that one key; mistakes exit 2 with one line", () => {
  const file = join(dir, `keys-${++files}.json`);
  const env = { PETSTORE_API_KEYS_FILE: file };
  const a = lastLine(keys(["add", "ci", "--scopes", "pets:read"], env).out);
  const b = lastLine(keys(["add", "ci", "--scopes", "pets:read"], env).out);
  assert.is(keys(["remove", a], env).code, 0);
  assert.is(JSON.parse(readFileSync(file, "utf8")).keys.length, 1);
  assert.is(keys(["remove", b.slice(0, 13)], env).code, 0);
  assert.is(JSON.parse(readFileSync(file, "utf8")).keys.length, 0);
  for (const args of [
    ["remove", "pets_nothing"],
    ["add", "x", "--scopes", "pets:delete"],
    ["add", "x"],
    ["frobnicate"],
  ]) {
    const run = keys(args, env);
    assert.is(run.code, 2, args.join(" "));
    assert.is(run.err.trim().split("\n").length, 1, run.err);
  }
  assert.is(keys(["list"]).code, 2, "no file: exit 2");
});

test("config: PETSTORE_JWT_ISSUER needs PETSTORE_JWT_AUDIENCE; a keys file or tokens mean no generated key; bad settings are one line", () => {
  assert.throws(() => loadConfig({ PETSTORE_JWT_ISSUER: "https://id.example/" }), /PETSTORE_/);
  assert.throws(() => loadConfig({ PETSTORE_JWT_ISSUER: "nope", PETSTORE_JWT_AUDIENCE: "a" }), /PETSTORE_/);
  assert.throws(() => loadConfig({ PETSTORE_AUTH_FAILURE_LIMIT: "lots" }), /PETSTORE_/);
  assert.throws(() => loadConfig({ PETSTORE_TRUST_PROXY: "maybe" }), /PETSTORE_/);
  const tokens = loadConfig({ PETSTORE_JWT_ISSUER: "https://id.example/", PETSTORE_JWT_AUDIENCE: "api" });
  assert.equal(tokens.config.jwt, { issuer: "https://id.example/", audience: "api" });
  assert.is(tokens.generatedKey, false);
  assert.equal(tokens.config.apiKeys, []);
  const file = loadConfig({ PETSTORE_API_KEYS_FILE: "/etc/keys.json", PETSTORE_AUTH_FAILURE_LIMIT: "5/10" });
  assert.is(file.generatedKey, false);
  assert.equal(file.config.authFailureLimit, { limit: 5, windowSeconds: 10 });
  assert.is(loadConfig({ PETSTORE_AUTH_FAILURE_LIMIT: "off" }).config.authFailureLimit, false);
  assert.is(loadConfig({ PETSTORE_TRUST_PROXY: "true" }).config.trustProxy, true);
  assert.is(loadConfig({}).generatedKey, true);
});

test("server: an unreadable keys file is one line on stderr and exit 2", async () => {
  const child = spawnServer({ PORT: "0", PETSTORE_API_KEYS_FILE: join(dir, "missing.json") });
  children.push(child);
  assert.is(await child.exited(), 2);
  assert.match(
    child.stderr(),
    /^petstore: PETSTORE_API_KEYS_FILE: cannot read the keys file .*missing\.json: ENOENT\n$/,
  );
});

test("server, 2 workers: a keys-file rotation under steady traffic fails no request; SIGHUP reloads too", async () => {
  const file = join(dir, `keys-${++files}.json`);
  const env = { PETSTORE_API_KEYS_FILE: file };
  const oldKey = lastLine(keys(["add", "shop", "--scopes", "pets:read,pets:write"], env).out);
  const child = spawnServer({
    PORT: "0",
    PETSTORE_WORKERS: "2",
    PETSTORE_STORAGE: `sqlite:${join(dir, "rotation.db")}`,
    ...env,
  });
  children.push(child);
  const url = await startedUrl(child);
  let key = oldKey;
  let running = true;
  const statuses: number[] = [];
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const clients = Array.from({ length: 4 }, async () => {
    while (running) {
      // A new connection each time: the cluster hands each to the next worker.
      const res = await fetch(`${url}/pets?limit=1`, {
        headers: { authorization: `Bearer ${key}`, connection: "close" },
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
  });
  try {
    await pause(500);
    const newKey = lastLine(keys(["add", "shop", "--scopes", "pets:read,pets:write"], env).out);
    await pause(2500); // every worker sees the file change within its poll (1 s)
    key = newKey; // clients move to the new key; the old one still works meanwhile
    await pause(500);
    assert.is(keys(["remove", oldKey], env).code, 0);
    await pause(2500);
    const old = await fetch(`${url}/pets`, { headers: { authorization: `Bearer ${oldKey}`, connection: "close" } });
    assert.is(old.status, 401, "the removed key is refused");
    // A file rewritten without the server seeing a change of size or time is read on SIGHUP.
    const third = lastLine(
      keys(["add", "ops", "--scopes", "pets:read"], { PETSTORE_API_KEYS_FILE: join(dir, "other.json") }).out,
    );
    const withThird = JSON.parse(readFileSync(file, "utf8"));
    withThird.keys.push(...JSON.parse(readFileSync(join(dir, "other.json"), "utf8")).keys);
    writeFileSync(file, JSON.stringify(withThird));
    child.process.kill("SIGHUP");
    await pause(1500);
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${url}/pets`, { headers: { authorization: `Bearer ${third}`, connection: "close" } });
      assert.is(res.status, 200, "the key added before SIGHUP works in every worker");
    }
  } finally {
    running = false;
    await Promise.all(clients);
  }
  assert.ok(statuses.length > 50, `${statuses.length} requests`);
  assert.equal(
    statuses.filter((s) => s !== 200),
    [],
    "no failed request",
  );
  const lines = jsonLines(child.stdout());
  assert.ok(lines.some((l) => l.msg === "keys file reloaded"));
  assert.ok(
    lines
      .filter((l) => l.msg === "request" && l.status === 200)
      .every((l) => l.principal === "shop" || l.principal === "ops"),
  );
  assert.not.ok(child.stdout().includes(oldKey));
});

test.run();
