/** The contract's error table as a client reads it: messages that say what to do. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { call, errorOf, makeStore } from "../support/helpers.ts";

test("errors: a 401's message says how to send the key (Authorization: Bearer <key>), with or without a wrong key", async () => {
  const store = makeStore();
  for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: "Basic a2V5" }]) {
    const answer = await call(store, "GET", "/v1/pets", { auth: false, headers });
    assert.is(answer.status, 401);
    assert.equal(errorOf(answer), {
      code: "unauthorized",
      message: "A valid API key is required. Send the key as Authorization: Bearer <key>.",
      status: 401,
    });
  }
  await store.close();
});

test.run();
