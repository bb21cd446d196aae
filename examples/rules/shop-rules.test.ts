/**
 * The shop's rules tested three ways: the rule function alone (no store), in process through
 * `createPet`, and over HTTP against a test server, where a client sees the same refusal.
 * Run: npx uvu -r tsx examples/rules '\.test\.ts$'
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createPetStore, RuleViolation } from "../../lib/index.ts";
import { startTestServer } from "../../testing/index.ts";
import { CATALOGUE, shopRules } from "./shop-rules.ts";

const context = { requestId: "r-1", scope: undefined };

test("in isolation: a category outside the catalogue is refused with unknown_category (422)", () => {
  const { beforeCreate } = shopRules(CATALOGUE, () => {});
  assert.throws(
    () => beforeCreate?.({ name: "Rex", categoryId: 9, status: "available" }, context),
    (e: unknown) => e instanceof RuleViolation && e.code === "unknown_category" && e.status === 422,
  );
  assert.not.throws(() => beforeCreate?.({ name: "Rex", categoryId: 1, status: "available" }, context));
});

test("in isolation: a pet sold on arrival is refused with sold_on_arrival (409)", () => {
  const { beforeCreate } = shopRules(CATALOGUE, () => {});
  assert.throws(
    () => beforeCreate?.({ name: "Rex", categoryId: 1, status: "sold" }, context),
    (e: unknown) => e instanceof RuleViolation && e.code === "sold_on_arrival" && e.status === 409,
  );
});

test("in process: createPet rejects with the rule's RuleViolation and stores nothing", async () => {
  const store = createPetStore({ auth: ["k"], rules: shopRules(CATALOGUE, () => {}) });
  const error = await store.createPet({ name: "Rex", categoryId: 9 }).catch((e: unknown) => e);
  assert.instance(error, RuleViolation);
  assert.equal((await store.listPets()).pets, []);
  await store.close();
});

test("over HTTP: the client gets the rule's Error answer, the audit line is written before the 201", async () => {
  const audit: string[] = [];
  const server = await startTestServer({ rules: shopRules(CATALOGUE, (line) => audit.push(line)) });
  try {
    const post = (body: object) =>
      fetch(`${server.url}/pets`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json", "x-request-id": "req-9" },
        body: JSON.stringify(body),
      });
    const refused = await post({ name: "Rex", categoryId: 9 });
    assert.is(refused.status, 422);
    assert.equal(await refused.json(), {
      code: "unknown_category",
      message: "categoryId 9 is not one of our categories.",
      status: 422,
    });
    const created = await post({ name: "Tom", categoryId: 2 });
    assert.is(created.status, 201);
    assert.equal(audit, ["pet 1 (Cats) created by request req-9"]);
    // The served OpenAPI document tells clients about the shop's codes.
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: { "/pets": { post: { responses: Record<string, unknown> } } };
    };
    assert.ok("409" in doc.paths["/pets"].post.responses);
  } finally {
    await server.close();
  }
});

test.run();
