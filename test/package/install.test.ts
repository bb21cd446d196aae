/**
 * A clean install: the packed package installed alone into an empty `npm init -y` project runs
 * no install script (none of the packages it brings has one) and, with only its required
 * dependencies, takes at most 4 MiB by `du -sk node_modules` (what the disk holds, 4 KiB blocks
 * included): no UI bundle unless the user installs swagger-ui-dist. The README quotes the figure.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { packedPackage, run } from "../support/tarball.ts";

const TMP = mkdtempSync(join(tmpdir(), "petstore-install-"));
const PROJECT = join(TMP, "empty-project");
const LIMIT_MIB = 4;
let output = "";

test.before(() => {
  const { tarball } = packedPackage();
  mkdirSync(PROJECT);
  run("npm", ["init", "-y"], PROJECT);
  // --foreground-scripts: any install script of any package would print its "> name@version script" header here.
  const install = (mode: string) =>
    run("npm", ["install", mode, "--foreground-scripts", "--loglevel=info", tarball], PROJECT, 120_000);
  try {
    output = install("--offline");
  } catch {
    output = install("--prefer-offline");
  }
});

test.after(() => rmSync(TMP, { recursive: true, force: true }));

/** Every package.json of the installed tree (nested node_modules included). */
function installedPackages(dir = join(PROJECT, "node_modules")): { path: string; json: Record<string, unknown> }[] {
  const found: { path: string; json: Record<string, unknown> }[] = [];
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".")) continue;
    const path = join(dir, name);
    if (name.startsWith("@")) {
      found.push(...installedPackages(path));
      continue;
    }
    const manifest = join(path, "package.json");
    try {
      found.push({ path, json: JSON.parse(readFileSync(manifest, "utf8")) });
    } catch {
      continue; // not a package folder
    }
    try {
      if (statSync(join(path, "node_modules")).isDirectory())
        found.push(...installedPackages(join(path, "node_modules")));
    } catch {
      // no nested packages
    }
  }
  return found;
}

/** What `du -sk` says the folder holds on disk, in KiB (blocks, not bytes: many small files cost more). */
function diskKiB(dir: string): number {
  const out = run("du", ["-sk", dir], PROJECT);
  return Number(out.trim().split(/\s+/)[0]);
}

test("install: npm install <tarball> into an empty project runs no install script", () => {
  const packages = installedPackages();
  assert.ok(
    packages.some((p) => p.json.name === "petstore-lib"),
    "petstore-lib is installed",
  );
  const withScripts = packages
    .filter((p) => {
      const scripts = (p.json.scripts ?? {}) as Record<string, unknown>;
      return ["preinstall", "install", "postinstall"].some((s) => s in scripts) || p.json.gypfile === true;
    })
    .map((p) => `${p.json.name}@${p.json.version}`);
  assert.equal(withScripts, [], "no installed package has an install script");
  assert.not.match(output, /^> \S+@\S+ (preinstall|install|postinstall)$/m, "npm ran no script");
  assert.not.ok(
    packages.some((p) => p.json.name === "swagger-ui-dist" || p.json.name === "@scarf/scarf"),
    "no UI bundle, no usage reporter",
  );
});

test(`install: the package with its required dependencies takes under ${LIMIT_MIB} MiB by du, the README's figure within 10%`, () => {
  const mib = diskKiB(join(PROJECT, "node_modules")) / 1024;
  console.log(`  installed size (du -sk): ${mib.toFixed(2)} MiB in ${installedPackages().length} packages`);
  assert.ok(mib <= LIMIT_MIB, `node_modules holds ${mib.toFixed(2)} MiB`);
  // The README's install section quotes the size: it must be the one measured here.
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const quoted = Number(/petstore-lib with its dependencies: ([\d.]+) MiB/.exec(readme)?.[1]);
  assert.ok(Math.abs(quoted - mib) <= mib * 0.1, `README says ${quoted} MiB; measured ${mib.toFixed(2)} MiB`);
});

test.run();
