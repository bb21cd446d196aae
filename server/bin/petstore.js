#!/usr/bin/env node
// The `petstore` command: runs the standalone server from the compiled dist/ when it exists
// (an installed package), else from the TypeScript sources through tsx (a git checkout).
import "./supported-node.js";
import { existsSync } from "node:fs";

const compiled = new URL("../dist/cli.js", import.meta.url);
let server;
if (existsSync(compiled)) {
  server = await import(compiled.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  server = await import("../cli.ts");
}
await server.main();
