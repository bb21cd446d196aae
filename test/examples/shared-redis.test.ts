/**
 * examples/shared-redis: two standalone servers sharing one Redis. Needs Redis: without it this
 * prints SKIPPED, or fails with CI=true. Uses a namespace unique to the run and deletes only its keys.
 */
import { createClient } from "@keyv/redis";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { REDIS_URL, RUN, serviceAvailable } from "../storage/services.ts";
import { lineOf, runProgram } from "../support/program.ts";

const NAMESPACE = `ex-${RUN}`;

/** Deletes the keys of this run's namespace (`<ns>:…` and `<ns>::…`), nothing else. */
async function removeOwnKeys() {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 2000, reconnectStrategy: false } });
  client.on("error", () => {});
  await client.connect();
  try {
    const keys: string[] = [];
    for await (const batch of client.scanIterator({ MATCH: `${NAMESPACE}:*`, COUNT: 100 })) keys.push(...batch);
    if (keys.length > 0) await client.del(keys);
    return keys.length;
  } finally {
    await client.close();
  }
}

if (serviceAvailable("redis", "examples/shared-redis")) {
  test.after(async () => {
    await removeOwnKeys();
  });

  test("examples/shared-redis: a pet created through one instance is listed and read through the other", async () => {
    const { code, stdout, stderr } = await runProgram(["examples/shared-redis/run.ts"], {
      REDIS_URL,
      PETSTORE_NAMESPACE: NAMESPACE,
    });
    assert.is(code, 0, `exit code; stdout: ${stdout}\nstderr: ${stderr}`);
    const a = /instance A: (http:\/\/127\.0\.0\.1:(\d+)\/v1)$/.exec(lineOf(stdout, "instance A:"));
    const b = /instance B: (http:\/\/127\.0\.0\.1:(\d+)\/v1)$/.exec(lineOf(stdout, "instance B:"));
    assert.ok(a && b, "both instances printed their URL");
    assert.is.not(a[2], b[2], "one port each");
    assert.ok(lineOf(stdout, "both use").includes(`namespace "${NAMESPACE}"`));

    const created = JSON.parse(lineOf(stdout, "created through A:").replace("created through A: ", ""));
    assert.equal(Object.keys(created), ["id", "name", "categoryId", "status"]);
    const listed = /^listed through B \(page \d+\): (.*)$/.exec(lineOf(stdout, "listed through B"))?.[1] ?? "";
    assert.equal(JSON.parse(listed), created);

    const fromB = Number(/created through B: id (\d+)/.exec(lineOf(stdout, "created through B:"))?.[1]);
    assert.ok(fromB > created.id, "ids handed out by Redis stay unique and increasing across instances");
    const read = /^read through A: 200 (.*)$/.exec(lineOf(stdout, "read through A:"))?.[1] ?? "";
    assert.equal(JSON.parse(read), { id: fromB, name: `${created.name}-sibling`, categoryId: 7, status: "available" });
    assert.ok(lineOf(stdout, "instances stopped").endsWith("exit codes 0, 0"), "both stopped cleanly on SIGTERM");

    assert.ok((await removeOwnKeys()) > 0, "the example wrote under the run's namespace");
  });

  test.run();
}
