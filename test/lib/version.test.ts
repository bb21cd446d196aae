/** lib/version.ts (the tracer's version in every span) is the package's version. */
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { VERSION } from "../../lib/version.ts";

test("VERSION is package.json's version", () => {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  assert.is(VERSION, pkg.version);
});

test.run();
