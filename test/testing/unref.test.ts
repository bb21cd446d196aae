/**
 * A test kit never keeps a process alive by itself: a script that starts a test server (or a test
 * store), uses it over a kept-alive connection, and forgets `close()` exits on its own, as a test
 * runner's process must (Jest waits for nothing it cannot see). `close()` still closes everything.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "../../testing/index.ts";
import { tempDir } from "../faults/support.ts";
import { ROOT, startProgram } from "../support/program.ts";

const dir = tempDir("unref");
const testing = JSON.stringify(join(ROOT, "testing/index.ts"));

function script(name: string, code: string): string {
  const file = join(dir, name);
  writeFileSync(file, code);
  return file;
}

test("startTestServer: a script that forgets close() exits by itself, with a kept-alive connection still open", async () => {
  const file = script(
    "forgets-server.mts",
    `import { startTestServer } from ${testing};
import http from "node:http";
const server = await startTestServer({ pets: 2, delayMs: 5 });
const headers = { authorization: "Bearer " + server.key, "content-type": "application/json" };
await fetch(server.url + "/pets", { method: "POST", headers, body: '{"name":"Rex","categoryId":1}' });
const agent = new http.Agent({ keepAlive: true });
await new Promise((resolve) => http.get(server.url + "/pets", { agent }, (res) => { res.resume(); res.on("end", resolve); }));
console.log("done", (await (await fetch(server.url + "/pets", { headers })).json()).length);
`,
  );
  const program = startProgram([file]);
  try {
    assert.is(await program.exited(20_000), 0, program.stderr());
    assert.match(program.stdout(), /done 3/);
  } finally {
    await program.kill();
  }
});

test("createTestStore: a script that forgets close() exits by itself", async () => {
  const file = script(
    "forgets-store.mts",
    `import { createTestStore } from ${testing};
const t = await createTestStore({ pets: 1, delayMs: 5 });
console.log("done", (await t.request("GET", "/v1/pets")).status, (await t.fetch("/v1/pets")).status);
`,
  );
  const program = startProgram([file]);
  try {
    assert.is(await program.exited(20_000), 0, program.stderr());
    assert.match(program.stdout(), /done 200 401/);
  } finally {
    await program.kill();
  }
});

test("close(): closes the port and every connection, kept-alive ones included", async () => {
  const t = await startTestServer();
  const { default: http } = await import("node:http");
  const agent = new http.Agent({ keepAlive: true });
  const socket = await new Promise<import("node:net").Socket>((resolve, reject) => {
    http
      .get(`${t.url}/pets`, { agent }, (res) => {
        const kept = res.socket;
        res.resume();
        res.on("end", () => resolve(kept));
      })
      .on("error", reject);
  });
  socket.ref(); // the agent unrefs a free socket: this test waits for its close
  const socketClosed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  await t.close();
  await socketClosed;
  const refused = await fetch(`${t.url}/pets`).then(
    () => false,
    () => true,
  );
  assert.ok(refused, "the port no longer accepts");
  agent.destroy();
});

test.run();
