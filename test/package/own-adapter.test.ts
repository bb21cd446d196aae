/**
 * docs/adapters.md, "Write your own adapter": its adapter (my-adapter.mjs) and its conformance test
 * (conformance.test.mjs) run as they are on the page, in a fresh project where only the packed
 * package is installed, with Node's own test runner: every published conformance case passes on an
 * adapter built from the public exports alone.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { conformanceCases } from "../../conformance/index.ts";
import { cleanUp, consumer, ROOT, run } from "../support/packed.ts";

/** The ```js blocks of a markdown page whose first line is `// <file name>`, by file name. */
function files(markdown: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const [, code] of markdown.matchAll(/^```js\n([\s\S]*?)^```$/gm)) {
    const name = /^\/\/ ([\w.-]+\.mjs)\n/.exec(code ?? "")?.[1];
    if (name !== undefined) found.set(name, code as string);
  }
  return found;
}

test.after(cleanUp);

test("docs/adapters.md: an adapter over node:http in ~30 lines from the packed package's public exports passes every published conformance case", () => {
  const page = files(readFileSync(join(ROOT, "docs/adapters.md"), "utf8"));
  const adapter = page.get("my-adapter.mjs");
  const suite = page.get("conformance.test.mjs");
  assert.ok(adapter, "the page has my-adapter.mjs");
  assert.ok(suite, "the page has conformance.test.mjs");
  const lines = adapter.trimEnd().split("\n").length;
  assert.ok(lines <= 35, `the adapter is ${lines} lines`);
  for (const specifier of adapter.matchAll(/from "([^"]+)"/g)) {
    assert.match(
      specifier[1] as string,
      /^petstore-lib(\/adapter|\/node-http)?$/,
      "only the package's public entry points",
    );
  }

  const dir = consumer([]); // the tarball alone: no framework, no test runner
  writeFileSync(join(dir, "my-adapter.mjs"), adapter);
  writeFileSync(join(dir, "conformance.test.mjs"), suite);
  const out = run(process.execPath, ["--test", "--test-reporter=tap", "conformance.test.mjs"], dir, 120_000);
  const count = (label: string) => Number(new RegExp(`^# ${label} (\\d+)$`, "m").exec(out)?.[1]);
  assert.is(count("fail"), 0, out);
  assert.is(count("pass"), conformanceCases().length, "every published case ran and passed");
});

test.run();
