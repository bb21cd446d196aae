#!/usr/bin/env node
// `npm start` in a clone: builds the library and petstore-server when a source changed since the
// last build (else nothing: the server answers within a second or two), then runs the server in
// this very process, as `exec` would (signals reach it; its workers start this file again).
import "../server/bin/supported-node.js";
import { execSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const SOURCES = ["lib", "adapters", "transfer", "deprecated", "server", "testing", "client", "conformance"];
const FILES = [
  "package.json",
  "server/package.json",
  "tsconfig.json",
  "tsconfig.build.json",
  "server/tsconfig.build.json",
];
const OUTPUTS = ["dist/lib/index.js", "server/dist/cli.js"];

/** The latest modification time of the files under `path` (or of the file); build outputs and dependencies left out. */
function newest(path) {
  const info = statSync(path, { throwIfNoEntry: false });
  if (info === undefined) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  let latest = 0;
  for (const entry of readdirSync(path)) {
    if (entry === "dist" || entry === "node_modules") continue;
    latest = Math.max(latest, newest(join(path, entry)));
  }
  return latest;
}

const built = Math.min(...OUTPUTS.map((file) => statSync(join(root, file), { throwIfNoEntry: false })?.mtimeMs ?? 0));
const changed = Math.max(...[...SOURCES, ...FILES].map((path) => newest(join(root, path))));
if (changed > built || !OUTPUTS.every((file) => existsSync(join(root, file)))) {
  execSync("npm run -s build", { cwd: root, stdio: "inherit" });
}
const { main } = await import(new URL("../server/dist/cli.js", import.meta.url).href);
await main();
