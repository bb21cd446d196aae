/** readBearer's scheme check by character codes reads every header as the lower-cased slice it replaces did. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type Credentials, readBearer } from "../../../lib/auth/bearer.ts";

/** readBearer as it was written with `slice(0, 6).toLowerCase()`: the reference. */
function readBearerBySlice(header: string): Credentials {
  if (header.length < 7 || header.charCodeAt(6) !== 32 || header.slice(0, 6).toLowerCase() !== "bearer") {
    return header.trim() === "" ? { kind: "missing" } : { kind: "invalid" };
  }
  const token = header.slice(7).trim();
  return token === "" ? { kind: "invalid" } : { kind: "bearer", token };
}

/** Every UTF-16 unit in each place of "Bearer " (and of its lower-case), then a few whole headers. */
function* headers(): Generator<string> {
  for (const scheme of ["Bearer ", "bearer "]) {
    for (let at = 0; at < scheme.length; at++) {
      for (let c = 0; c <= 0xffff; c++)
        yield `${scheme.slice(0, at)}${String.fromCharCode(c)}${scheme.slice(at + 1)}key`;
    }
  }
  yield* ["", " ", "Bearer", "Bearer ", "Bearer  ", "BEARER k", "bEaReR k", "Bearer\tk", "Basic a2V5", "Bearerk"];
  yield* ["Bearer  k ", "Bearer \u00a0k", "\u212aey", "B\u0130arer k", "Be\u0131rer k", "Bearer \ud83d"];
}

test("readBearer: the scheme, in any case, read as the lower-cased slice read it, over every UTF-16 unit in each place", () => {
  let checked = 0;
  for (const header of headers()) {
    const got = readBearer(header);
    const want = readBearerBySlice(header);
    if (got.kind !== want.kind || (got.kind === "bearer" && want.kind === "bearer" && got.token !== want.token)) {
      assert.unreachable(`${JSON.stringify(header)}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
    }
    checked++;
  }
  assert.ok(checked > 900_000);
  assert.equal(readBearer("bEaReR  my-key "), { kind: "bearer", token: "my-key" });
  assert.equal(readBearer("Bearerx my-key"), { kind: "invalid" });
});
test("readBearer: several credentials (a list, or a comma beside a Bearer part) are repeated; a Digest header's commas are not", () => {
  for (const header of [
    ["Bearer a", "Bearer b"],
    ["Basic x", "Basic y"],
    "Bearer a, Bearer b",
    "Bearer a,Bearer b",
    "Bearer a,",
    "Basic eA==, bearer b",
    "Bearer, Bearer b",
  ]) {
    assert.equal(readBearer(header), { kind: "repeated" }, JSON.stringify(header));
  }
  assert.equal(readBearer('Digest username="u", realm="r"'), { kind: "invalid" });
  assert.equal(
    readBearer("Basic x, Basic y"),
    { kind: "invalid" },
    "joined, no Bearer part: one wrong scheme as far as can be told",
  );
  assert.equal(readBearer("Bearer,key"), { kind: "invalid" });
  assert.equal(readBearer(["Bearer k"]), { kind: "bearer", token: "k" });
  assert.equal(readBearer([]), { kind: "missing" });
});

test.run();
