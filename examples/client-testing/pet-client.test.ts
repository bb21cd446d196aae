/**
 * The client's tests with uvu, against a real Pet Store test server: started once, reset before
 * each test, made to fail and to be slow from the test. Run: npx uvu -r tsx examples/client-testing '\.test\.ts$'
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { TestServer } from "../../testing/index.ts";
import { startTestServer } from "../../testing/index.ts";
import { createPetClient, PetApiError, PetApiTimeout } from "./pet-client.ts";

const client = suite<{ server: TestServer }>("pet client");

client.before(async (context) => {
  context.server = await startTestServer({ pets: 3 });
});
client.before.each(async ({ server }) => {
  await server.reset(); // 3 seeded pets, ids from 1, no pending failure or delay
});
client.after(async ({ server }) => {
  await server.close();
});

const connect = (server: TestServer, timeoutMs?: number) =>
  createPetClient({ baseUrl: server.url, key: server.key, maxRetryDelayMs: 10, timeoutMs });

client("lists the seeded pets", async ({ server }) => {
  const pets = await connect(server).listPets();
  assert.equal(
    pets.map((p) => p.name),
    ["pet-1", "pet-2", "pet-3"],
  );
});

client("adds a pet, which the next list shows", async ({ server }) => {
  const pet = await connect(server).addPet({ name: "Rex", categoryId: 2 });
  assert.equal(pet, { id: 4, name: "Rex", categoryId: 2, status: "available" });
  assert.is((await connect(server).listPets()).length, 4);
});

client("retries a list answered 503, and gets the pets", async ({ server }) => {
  server.failNext(2, { status: 503 });
  assert.is((await connect(server).listPets()).length, 3);
});

client("gives up after its retries: the 503 reaches the caller as a PetApiError", async ({ server }) => {
  server.failNext(3, { status: 503 });
  const error = await connect(server)
    .listPets()
    .catch((e: unknown) => e);
  assert.instance(error, PetApiError);
  assert.is((error as PetApiError).code, "storage_unavailable");
});

client("does not retry a create answered 503 (not safe to repeat)", async ({ server }) => {
  server.failNext(1, { status: 503, operation: "createPet" });
  const error = await connect(server)
    .addPet({ name: "Rex", categoryId: 1 })
    .catch((e: unknown) => e);
  assert.is((error as PetApiError).status, 503);
  assert.is((await connect(server).listPets()).length, 3, "nothing was created");
});

client("a slow answer ends in PetApiTimeout", async ({ server }) => {
  server.delay(500);
  const error = await connect(server, 50)
    .listPets()
    .catch((e: unknown) => e);
  assert.instance(error, PetApiTimeout);
});

client.run();
