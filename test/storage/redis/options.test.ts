/**
 * What `redisStorage` and `openStorage` refuse for a cluster or a durability setting before
 * connecting anywhere: one StorageConfigError line that says what to write instead, never a password.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openStorage, StorageConfigError } from "../../../lib/storage/open.ts";
import { type RedisStorageOptions, redisStorage } from "../../../lib/storage/redis/index.ts";
import { REDIS_URL } from "../services.ts";

async function refusal(open: () => Promise<unknown>): Promise<string> {
  try {
    await open();
  } catch (error) {
    assert.instance(error, StorageConfigError);
    return (error as Error).message;
  }
  assert.unreachable("expected a StorageConfigError");
  return "";
}

const refused = (options: unknown) => refusal(() => redisStorage(options as RedisStorageOptions));

test("redisStorage: exactly one of url and cluster", async () => {
  for (const options of [{}, { url: "redis://h:1", cluster: { rootNodes: [{ url: "redis://h:2" }] } }]) {
    assert.match(await refused(options), /give either url \(one server\) or cluster: \{ rootNodes/);
  }
});

test("redisStorage: cluster is { rootNodes: [{ url }] }: no other option, at least one node, each a redis:// or rediss:// URL", async () => {
  assert.match(await refused({ cluster: { rootNodes: [] } }), /cluster must be \{ rootNodes: \[\{ url/);
  assert.match(
    await refused({ cluster: { rootNodes: [{ url: "redis://h:1" }], defaults: {} } }),
    /\(unknown: defaults\)/,
  );
  assert.match(
    await refused({ cluster: { rootNodes: [{ url: "http://h:1" }] } }),
    /cluster.rootNodes\[0\].url must look like redis:/,
  );
  const secret = await refused({ cluster: { rootNodes: [{ url: "redis://h:1" }, { url: "http://:s3cret@h:2" }] } });
  assert.match(secret, /cluster.rootNodes\[1\].url/);
  assert.not.match(secret, /s3cret/);
});

test("redisStorage: a cluster's nodes are all redis:// or all rediss://, and only database 0", async () => {
  const mixed = { cluster: { rootNodes: [{ url: "redis://h:1" }, { url: "rediss://h:2" }] } };
  assert.match(await refused(mixed), /all redis:\/\/ or all rediss:\/\//);
  assert.match(await refused({ cluster: { rootNodes: [{ url: "redis://h:1/2" }] } }), /only database 0/);
});

test('redisStorage: durability is "async" or "replicated"', async () => {
  const options = { url: "redis://127.0.0.1:1", durability: "sync" };
  assert.match(await refused(options), /durability must be "async" or "replicated" \(got "sync"\)/);
});

test("openStorage: redis+cluster:// needs host:port entries and takes namespace and durability only", async () => {
  for (const spec of ["redis+cluster://", "redis+cluster://h:1,,h:2", "redis+cluster://h:1?db=2"]) {
    assert.match(
      await refusal(() => openStorage(spec)),
      /a cluster is redis\+cluster:\/\/host:port,host:port \(rediss\+cluster:\/\/ for TLS\)/,
    );
  }
  const wrong = await refusal(() => openStorage("redis+cluster://u:s3cret@h:1?durability=always"));
  assert.match(wrong, /durability must be "async" or "replicated" \(got "always"\)/);
  assert.not.match(wrong, /s3cret/);
});

test("openStorage: an unknown scheme's message names redis+cluster:// among the choices", async () => {
  assert.match(await refusal(() => openStorage("rediscluster://h:1")), /redis\+cluster:\/\/host:6379,host:6380/);
});

test("openStorage: a cluster nobody answers is one line naming every root node, passwords hidden", async () => {
  const message = await refusal(() =>
    openStorage("redis+cluster://:s3cret@127.0.0.1:1,127.0.0.1:2?namespace=x", { operationTimeoutMs: 500 }),
  );
  assert.match(
    message,
    /^cannot reach redis cluster at redis:\/\/:\*\*\*@127\.0\.0\.1:1,redis:\/\/:\*\*\*@127\.0\.0\.1:2: /,
  );
  assert.match(message, /connection refused/);
  assert.not.match(message, /s3cret/);
});

test("openStorage: a single server given as a cluster was reached but refused: it has no cluster support", async () => {
  const { host } = new URL(REDIS_URL);
  const message = await refusal(() => openStorage(`redis+cluster://${host}`, { operationTimeoutMs: 1000 }));
  // Without a server there, the refusal is the connection's; with one, the server's own words.
  assert.match(message, /cluster support disabled|cannot reach redis cluster/);
});

test.run();
