/** Every adapter serves the OpenAPI document at GET {base}/openapi.json without a key. */
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { baseOf, closeTargets, TARGETS } from "../conformance/targets.ts";

const committed = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8"));

test.after(closeTargets);

// The committed document describes the default base path, /v1 (a mounted target serves its own).
for (const target of TARGETS.filter((t) => baseOf(t) === "/v1")) {
  test(`${target.name}: GET /v1/openapi.json without a key answers 200 with the committed openapi.json; HEAD too, without a body`, async () => {
    const session = await target.open();
    try {
      const res = await session.send({ method: "GET", path: "/v1/openapi.json" });
      assert.is(res.status, 200, res.body.slice(0, 200));
      assert.is(res.headers["content-type"], "application/json; charset=utf-8");
      assert.equal(JSON.parse(res.body), committed);
      const head = await session.send({ method: "HEAD", path: "/v1/openapi.json" });
      assert.equal([head.status, head.body], [200, ""]);
    } finally {
      await session.close();
    }
  });
}

test.run();
