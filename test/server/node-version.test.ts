/**
 * On a Node.js older than petstore-server's engines (22), the `petstore` command and `npm start`
 * (scripts/start.mjs) print one line naming the version needed and exit 1, before loading anything
 * that would fail there. The old Node: one of PETSTORE_NODE_BINARIES or on PATH (.ci/run installs
 * Node.js 20); none found prints SKIPPED, with CI=true it fails.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "../support/program.ts";

const NEEDED = Number(
  /^>=(\d+)$/.exec(JSON.parse(readFileSync(join(ROOT, "server/package.json"), "utf8")).engines.node)?.[1],
);

/** A `node` binary older than NEEDED, with its version, or undefined. */
function oldNode(): { bin: string; version: string } | undefined {
  const onPath = spawnSync("which", ["-a", "node"], { encoding: "utf8" }).stdout.split("\n");
  const given = (process.env.PETSTORE_NODE_BINARIES ?? "").split(":");
  for (const bin of [...given, ...onPath, "/usr/bin/node"].filter((p) => p !== "")) {
    const version = spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout?.trim().replace(/^v/, "");
    if (version && Number(version.split(".")[0]) < NEEDED) return { bin, version };
  }
  return undefined;
}

const old = oldNode();
if (old === undefined && process.env.CI !== "true") {
  console.log(
    `\n*** SKIPPED: petstore-server on an old Node.js: no Node.js before ${NEEDED} found (with CI=true this fails) ***\n`,
  );
} else {
  const entries: [string, string][] = [
    ["the petstore command", "server/bin/petstore.js"],
    ["npm start", "scripts/start.mjs"],
  ];
  for (const [what, file] of entries) {
    test(`${what} on Node.js < ${NEEDED}: one line naming the version needed, exit 1`, () => {
      assert.ok(old, `no Node.js before ${NEEDED} on PATH or in PETSTORE_NODE_BINARIES`);
      const run = spawnSync(old.bin, [file, "--version"], { cwd: ROOT, encoding: "utf8", timeout: 30_000 });
      assert.is(run.status, 1, run.stderr);
      assert.is(run.stdout, "");
      assert.is(run.stderr, `petstore-server needs Node.js ${NEEDED} or later; this is Node.js ${old.version}\n`);
    });
  }
}

test.run();
