/**
 * Part of `npm run build` (after tsc): the library's JavaScript in dist/ becomes one file per entry
 * of package.json's `exports`, with the code entries share in dist/chunks/ (esbuild, code
 * splitting: one copy of each module, so a class is the same class through every entry). tsc wrote
 * one file per module, 144 of them, and an install rounds each up to a disk block: bundled, an
 * embedder's install is 364 KiB smaller (issue 57: at most 4 MiB). Not minified: names, line
 * structure and stack traces stay readable. Packages and `node:` modules stay imports.
 */
import { cpSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIST = join(ROOT, "dist");

/** The JavaScript files package.json's `exports` names (every condition but `types`). */
function entryFiles(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: unknown };
  const found = new Set<string>();
  const collect = (value: unknown) => {
    if (typeof value === "string" && /\.[mc]?js$/.test(value)) found.add(join(ROOT, value));
    else if (value !== null && typeof value === "object") for (const inner of Object.values(value)) collect(inner);
  };
  collect(manifest.exports);
  return [...found];
}

function javascriptUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return javascriptUnder(path);
    return /\.[mc]?js$/.test(entry.name) ? [path] : [];
  });
}

const entries = entryFiles();
const staging = join(ROOT, ".tmp", "bundle-dist");
rmSync(staging, { recursive: true, force: true });
await build({
  entryPoints: entries,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "neutral",
  packages: "external",
  external: ["node:*"],
  target: "es2022",
  outdir: staging,
  outbase: DIST,
  entryNames: "[dir]/[name]",
  chunkNames: "chunks/[name]-[hash]",
  legalComments: "none",
  logLevel: "error",
});
// tsc's per-module files go; the bundles take the entries' places.
for (const file of javascriptUnder(DIST)) rmSync(file);
cpSync(staging, DIST, { recursive: true });
rmSync(staging, { recursive: true, force: true });
