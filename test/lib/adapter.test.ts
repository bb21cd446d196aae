/**
 * `petstore-lib/adapter`, the adapter kit: what it exports, the root's deprecated aliases of the
 * same names (the same functions, kept until 2.0), and the API reports that say so.
 */
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import * as kit from "../../lib/adapter.ts";
import * as root from "../../lib/index.ts";

/** The kit's values; its types (AdapterStore, BodyReader, HeaderValue) leave no trace at run time. */
const ROOT_VALUES = ["checkOptionNames", "isPromise", "isUnderBasePath", "REQUEST_HEADERS", "requestIdOf"];
/** The kit's values: the root's, and newRequestId, which the kit brought (the root never had it). */
const VALUES = [...ROOT_VALUES, "newRequestId"];
/** What the root keeps as deprecated aliases: its values and AdapterStore. */
const DEPRECATED = [...ROOT_VALUES, "AdapterStore"];

const report = (name: string) => readFileSync(new URL(`../../api/${name}.api.md`, import.meta.url), "utf8");

/** The comment line above `export … <name>` in an API report, or undefined when it has no such export. */
function tagsOf(text: string, name: string): string | undefined {
  const lines = text.split("\n");
  const at = lines.findIndex((line) =>
    new RegExp(`^export (?:declare )?(?:const|function|type|interface) ${name}\\b`).test(line),
  );
  return at < 1 ? undefined : lines[at - 1];
}

test("adapter kit: petstore-lib/adapter exports checkOptionNames, isPromise, isUnderBasePath, REQUEST_HEADERS, requestIdOf and newRequestId", () => {
  assert.equal(Object.keys(kit).sort(), [...VALUES].sort());
  assert.ok(kit.isUnderBasePath("/v1/pets?limit=5", "/v1"));
  assert.not.ok(kit.isUnderBasePath("/v10", "/v1"));
  assert.ok(kit.isPromise(Promise.resolve(1)));
  assert.ok(kit.REQUEST_HEADERS.includes("authorization"));
  assert.is(kit.requestIdOf("abc-1"), "abc-1");
  assert.match(kit.newRequestId(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.throws(() => kit.checkOptionNames("myAdapter", { stor: 1 }, ["store"]), /myAdapter: unknown option "stor"/);
});

test("adapter kit: the root's names are the same functions and values as the kit's", () => {
  const rootValues = root as unknown as Record<string, unknown>;
  for (const name of ROOT_VALUES) assert.is(rootValues[name], (kit as Record<string, unknown>)[name], name);
});

test("adapter kit: the API report shows each of its names deprecated in petstore-lib, and plain in petstore-lib/adapter", () => {
  const rootReport = report("petstore-lib");
  const kitReport = report("petstore-lib-adapter");
  for (const name of DEPRECATED) {
    assert.match(tagsOf(rootReport, name) ?? "", /@deprecated/, `petstore-lib's ${name}`);
    const tags = tagsOf(kitReport, name);
    assert.ok(tags !== undefined, `petstore-lib/adapter exports ${name}`);
    assert.not.match(tags, /@deprecated/, `petstore-lib/adapter's ${name}`);
  }
  for (const name of ["BodyReader", "HeaderValue"]) assert.ok(tagsOf(kitReport, name) !== undefined, name);
});

test("adapter kit: package.json exports petstore-lib/adapter with types and code", () => {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  assert.equal(pkg.exports["./adapter"], { types: "./dist/lib/adapter.d.ts", default: "./dist/lib/adapter.js" });
});

test.run();
