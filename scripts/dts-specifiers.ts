/**
 * Part of `npm run build`: in dist/**\/*.d.ts, relative module specifiers that end in `.ts` become
 * `.js` (`from "./auth.ts"` → `from "./auth.js"`). tsc's rewriteRelativeImportExtensions rewrites
 * the emitted JavaScript only; declarations that name `.ts` files fail on TypeScript before 5.0
 * (TS2691, or every type silently `any` under skipLibCheck) and in tools that expect `.js`.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The dist/ folders to rewrite: the library's, or those named (`server/dist`, relative to the repository). */
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DISTS = process.argv.length > 2 ? process.argv.slice(2).map((dir) => join(ROOT, dir)) : [join(ROOT, "dist")];

/** `from "./x.ts"`, `import("../y.ts")`, `import "./z.ts"` (also .mts/.cts), relative paths only. */
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"'\n]*?)\.([mc]?)ts\2/g;

/** The text with its relative `.ts` specifiers as `.js` ones. */
function rewriteSpecifiers(text: string): string {
  return text.replace(SPECIFIER, (whole, lead: string, quote: string, path: string, kind: string) =>
    path.endsWith(".d") ? whole : `${lead}${quote}${path}.${kind}js${quote}`,
  );
}

function declarationsUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declarationsUnder(path);
    return /\.d\.[mc]?ts$/.test(entry.name) ? [path] : [];
  });
}

// Silent, as tsc is: `npm pack --json` runs the build (prepack) and its stdout must stay JSON.
for (const file of DISTS.flatMap(declarationsUnder)) {
  const text = readFileSync(file, "utf8");
  const rewritten = rewriteSpecifiers(text);
  if (rewritten !== text) writeFileSync(file, rewritten);
}
