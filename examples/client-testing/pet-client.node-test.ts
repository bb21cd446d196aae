/**
 * The same client tested with Node's own runner, node:test: the test kit imports no runner, so it
 * fits any. Run: node --import tsx --test examples/client-testing/pet-client.node-test.ts
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, test } from "node:test";
import type { TestServer } from "../../testing/index.ts";
import { startTestServer } from "../../testing/index.ts";
import { createPetClient, PetApiTimeout } from "./pet-client.ts";

let server: TestServer;
before(async () => {
  server = await startTestServer({ pets: 2 });
});
beforeEach(() => server.reset());
after(() => server.close());

const connect = (timeoutMs?: number) =>
  createPetClient({ baseUrl: server.url, key: server.key, maxRetryDelayMs: 10, timeoutMs });

test("lists the seeded pets", async () => {
  assert.deepEqual(
    (await connect().listPets()).map((p) => p.id),
    [1, 2],
  );
});

test("retries a list answered 503", async () => {
  server.failNext(1, { status: 503, operation: "listPets" });
  assert.equal((await connect().listPets()).length, 2);
});

test("a slow answer ends in PetApiTimeout", async () => {
  server.delay(500);
  await assert.rejects(connect(50).listPets(), PetApiTimeout);
});
