/**
 * Part of `npm run build` (after dts-specifiers.ts): removes from dist/ the declarations no entry
 * of package.json reaches. tsc writes a .d.ts for every module, but an internal module's types are
 * read only through the entries' declarations; the others are never opened by a compiler and cost
 * an embedder's install a disk block each (65 files, 272 KiB of 4.5 MiB when this was written).
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIST = join(ROOT, "dist");

/** The declaration files package.json's `exports` names (its `types` conditions). */
function entryDeclarations(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: unknown };
  const found: string[] = [];
  const collect = (value: unknown) => {
    if (typeof value === "string" && /\.d\.[mc]?ts$/.test(value)) found.push(resolve(ROOT, value));
    else if (value !== null && typeof value === "object") for (const inner of Object.values(value)) collect(inner);
  };
  collect(manifest.exports);
  return found;
}

/** Relative specifiers of `from "…"`, `import("…")` and `import "…"` in a declaration file, as .d.ts paths. */
function referenced(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"'\n]+)["']/g)) {
    const path = (match[1] as string).replace(/\.([mc]?)js$/, ".d.$1ts");
    out.push(resolve(dirname(file), path));
  }
  return out;
}

function declarationsUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declarationsUnder(path);
    return /\.d\.[mc]?ts$/.test(entry.name) ? [path] : [];
  });
}

const reached = new Set<string>();
const pending = entryDeclarations();
for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
  if (reached.has(file) || !existsSync(file)) continue;
  reached.add(file);
  pending.push(...referenced(file));
}
if (reached.size === 0) throw new Error("prune-declarations: no entry declaration found: is dist/ built?");
// Silent, as tsc is: `npm pack --json` runs the build (prepack) and its stdout must stay JSON.
for (const file of declarationsUnder(DIST)) if (!reached.has(file)) rmSync(file);
