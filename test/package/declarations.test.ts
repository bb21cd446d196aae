/**
 * The declarations in the packed package name JavaScript files, as every TypeScript version and
 * type tool expects: no `.d.ts` imports a `.ts` path (the sources do; `npm run build` rewrites
 * them, scripts/dts-specifiers.ts), and every relative specifier leads to a declaration that ships.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { packedPackage, run } from "../support/tarball.ts";

const TMP = mkdtempSync(join(tmpdir(), "petstore-declarations-"));
test.after(() => rmSync(TMP, { recursive: true, force: true }));

/** Module specifiers of a declaration file: `from "…"`, `import("…")`, `import "…"`. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"'\n]+)["']/g;

test("package: no .d.ts in the tarball imports a .ts path; each relative import leads to a shipped declaration", () => {
  const { tarball, files } = packedPackage();
  mkdirSync(join(TMP, "x"));
  run("tar", ["-xzf", tarball, "-C", join(TMP, "x")], TMP);
  const root = join(TMP, "x", "package");
  const declarations = files.map((f) => f.path).filter((p) => /\.d\.[mc]?ts$/.test(p));
  assert.ok(declarations.length > 10, `${declarations.length} declaration files ship`);
  const wrong: string[] = [];
  for (const path of declarations) {
    const text = readFileSync(join(root, path), "utf8");
    for (const [, specifier = ""] of text.matchAll(SPECIFIER)) {
      if (!specifier.startsWith(".")) continue;
      if (/\.[mc]?ts$/.test(specifier)) wrong.push(`${path}: imports "${specifier}"`);
      else if (!existsSync(join(root, dirname(path), specifier.replace(/\.([mc]?)js$/, ".d.$1ts"))))
        wrong.push(`${path}: "${specifier}" has no declaration in the tarball`);
    }
  }
  assert.equal(wrong, []);
});

test.run();
