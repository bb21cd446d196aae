/**
 * The packages as users get them, for the suites of test/package: a copy of the repository (what a
 * fresh clone has) is built (`npm run build`) and packed once per test process, the library with
 * `npm pack` and petstore-server with `npm run pack:server`, and each suite installs the tarballs
 * into projects of its own under a temporary folder. Nothing here touches the repository's own
 * dist/ or node_modules/ (the copy links to the latter's packages to build).
 */
import type { SpawnSyncReturns } from "node:child_process";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./program.ts";

/**
 * The environment for nested npm commands: without the npm_* variables of an outer `npm test`
 * (npm_config_local_prefix would point them at the repository), but with the same cache.
 */
export function npmEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) || name === "npm_config_cache") env[name] = value;
  }
  return {
    ...env,
    npm_config_fund: "false",
    npm_config_audit: "false",
    npm_config_update_notifier: "false",
    ...extra,
  };
}

/** Runs a command to its end (bounded); throws with its output when it fails; resolves stdout. */
export function run(command: string, args: string[], cwd: string, ms = 60_000, env = npmEnv()): string {
  const result: SpawnSyncReturns<string> = spawnSync(command, args, {
    cwd,
    env,
    encoding: "utf8",
    timeout: ms,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(" ")} failed (${result.error?.message ?? `exit ${result.status}`})\n` +
        `${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

export interface Packed {
  /** The folder that holds the tarballs (and the copy they were packed from). */
  dir: string;
  /** Absolute path of petstore-lib-<version>.tgz. */
  tarball: string;
  /** The files in the tarball, as `npm pack --json` lists them. */
  files: { path: string }[];
  /** Absolute path of petstore-server-<version>.tgz (it depends on the library's tarball: install both). */
  serverTarball: string;
}

let packed: Packed | undefined;

/** Everything a fresh clone has, without installed or built files. */
function copySource(target: string) {
  const skip = new Set(["node_modules", ".git", "dist", ".tmp", "coverage"]);
  cpSync(ROOT, target, {
    recursive: true,
    filter: (path) => {
      const rel = path.slice(ROOT.length).replace(/^[/\\]/, "");
      const top = rel.split(/[/\\]/)[0] ?? "";
      return !skip.has(top) && !rel.endsWith(".tgz");
    },
  });
  // The repository's packages, but for the workspace's own (the library, the server): the copy's.
  const own = new Map([
    ["petstore-lib", ".."],
    ["petstore-server", "../server"],
  ]);
  mkdirSync(join(target, "node_modules"));
  for (const name of readdirSync(join(ROOT, "node_modules"))) {
    symlinkSync(own.get(name) ?? join(ROOT, "node_modules", name), join(target, "node_modules", name));
  }
}

/** Builds and packs the package (once per process); the folder is removed when the process exits. */
export function packedPackage(): Packed {
  if (packed !== undefined) return packed;
  const dir = mkdtempSync(join(tmpdir(), "petstore-tarball-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  const source = join(dir, "source");
  copySource(source);
  run("npm", ["run", "build"], source, 300_000);
  // The build just ran: packing skips prepack's second build (it took over a minute on a loaded machine).
  const out = JSON.parse(
    run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], source, 300_000),
  );
  const serverTarball = run(
    "npm",
    ["run", "-s", "pack:server", "--", "--pack-destination", dir],
    source,
    300_000,
  ).trim();
  packed = { dir, tarball: join(dir, out[0].filename), files: out[0].files, serverTarball };
  return packed;
}

/** The version of a package installed in the repository (to install the same one elsewhere). */
export function repoVersion(pkg: string): string {
  const result = run(process.execPath, ["-p", `require(${JSON.stringify(`${pkg}/package.json`)}).version`], ROOT);
  return result.trim();
}
