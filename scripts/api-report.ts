/**
 * The public API of each subpath both packages export (petstore-lib, and petstore-server in
 * server/), as one API Extractor report per subpath in api/ (e.g. api/petstore-lib-node-http.api.md,
 * api/petstore-server.api.md), read from the built declarations in dist/ and server/dist/.
 * `--update` (npm run api:update) writes the reports; `--check` (npm run api:check, in CI) fails,
 * naming each subpath and showing the diff, when a committed report differs from what the code gives.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  ExtractorMessageCategory,
  type IConfigFile,
} from "@microsoft/api-extractor";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const REPORTS = join(ROOT, "api");
const TEMP = join(ROOT, ".tmp", "api-extractor"); // .tmp/ is gitignored
/** The packages this repository publishes: the library, then the server (which uses its names). */
const PACKAGES = [ROOT, join(ROOT, "server")];
/** Subpaths that are data, not code. */
const NOT_CODE = new Set(["./openapi.json", "./package.json"]);

const mode = process.argv[2];
if (mode !== "--update" && mode !== "--check") {
  console.error("usage: tsx scripts/api-report.ts --update | --check");
  process.exit(2);
}
const update = mode === "--update";

interface PackageJson {
  name: string;
  exports: Record<string, string | { types?: string }>;
}

/** `petstore-lib` for ".", `petstore-lib-node-http` for "./node-http". */
const reportName = (name: string, subpath: string) =>
  subpath === "." ? name : `${name}-${subpath.slice(2).replaceAll("/", "-")}`;

/** The API Extractor configuration for one entry point: an API report only, with our noise silenced. */
function configFor(folder: string, name: string, subpath: string, types: string): IConfigFile {
  return {
    projectFolder: folder,
    mainEntryPointFilePath: join(folder, types),
    compiler: {
      overrideTsconfig: {
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2023"],
          types: ["node"],
          strict: true,
          skipLibCheck: true,
        },
        files: [join(folder, types)],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: reportName(name, subpath),
      reportFolder: REPORTS,
      reportTempFolder: TEMP,
      includeForgottenExports: false,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    newlineKind: "lf",
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning },
        // We do not use @public/@beta tags: everything a subpath exports is public.
        "ae-missing-release-tag": { logLevel: ExtractorLogLevel.None },
        // Not every member has a doc comment; the report marks those "(undocumented)".
        "ae-undocumented": { logLevel: ExtractorLogLevel.None },
        // A public signature that uses a type the entry point does not export: kept in the report, for review.
        "ae-forgotten-export": { logLevel: ExtractorLogLevel.None, addToApiReportFile: true },
      },
      // Our comments are JSDoc, not strict TSDoc: its syntax warnings are noise here.
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
    },
  };
}

/** `diff -u` of the committed report and the one the code gives (or a note when diff is missing). */
function showDiff(committed: string, fresh: string): string {
  const run = spawnSync(
    "diff",
    ["-u", "--label", `committed ${committed.slice(ROOT.length)}`, "--label", "from the code", committed, fresh],
    {
      encoding: "utf8",
    },
  );
  return run.stdout || run.stderr || String(run.error);
}

rmSync(TEMP, { recursive: true, force: true });
mkdirSync(TEMP, { recursive: true });
mkdirSync(REPORTS, { recursive: true });

/** Every name some entry of either package exports: a signature may use any of them. */
const exported = new Set<string>();
/** Entries named as namespaces: the root's deprecated aliases read `typeof adapter.isPromise` (petstore-lib/adapter). */
const entryNames = new Set<string>();
const FORGOTTEN = /The symbol "([^"]+)" needs to be exported/;
const EXPORT = /^export (?:declare )?(?:abstract )?(?:interface|type|function|const|class|enum|let) (\w+)/gm;

const problems: string[] = [];
/** Types a signature uses and its entry does not export, checked once every entry's names are known. */
const unexported: { label: string; name: string; message: string }[] = [];
for (const folder of PACKAGES) {
  const packageJson = join(folder, "package.json");
  const pkg = JSON.parse(readFileSync(packageJson, "utf8")) as PackageJson;
  for (const subpath of Object.keys(pkg.exports)) entryNames.add(subpath.slice(2));
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (NOT_CODE.has(subpath)) continue;
    const label = subpath === "." ? pkg.name : `${pkg.name}${subpath.slice(1)}`;
    const types = typeof target === "string" ? undefined : target.types;
    if (types === undefined) {
      problems.push(`${label}: package.json exports no "types" for it`);
      continue;
    }
    if (!existsSync(join(folder, types))) {
      problems.push(`${label}: ${types} does not exist (run npm run build first)`);
      continue;
    }
    const config = ExtractorConfig.prepare({
      configObject: configFor(folder, pkg.name, subpath, types),
      configObjectFullPath: undefined,
      packageJsonFullPath: packageJson,
    });
    const messages: string[] = [];
    const result = Extractor.invoke(config, {
      localBuild: update,
      typescriptCompilerFolder: join(ROOT, "node_modules", "typescript"),
      messageCallback(message) {
        message.handled = true; // progress lines (category "console") are left out
        if (message.category === ExtractorMessageCategory.Console) return;
        const forgotten = message.messageId === "ae-forgotten-export" ? FORGOTTEN.exec(message.text)?.[1] : undefined;
        if (forgotten !== undefined) {
          unexported.push({ label, name: forgotten, message: message.formatMessageWithLocation(ROOT) });
        }
        if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning) {
          messages.push(`  ${message.logLevel}: ${message.formatMessageWithLocation(ROOT)}`);
        }
      },
    });
    const committed = config.reportFilePath;
    const fresh = config.reportTempFilePath;
    for (const m of readFileSync(fresh, "utf8").matchAll(EXPORT)) exported.add(m[1] as string);
    if (messages.length > 0) problems.push(`${label}: API Extractor says:\n${messages.join("\n")}`);
    if (update) {
      console.log(`${label}: ${result.apiReportChanged ? "updated" : "unchanged"} ${committed.slice(ROOT.length)}`);
    } else if (!existsSync(committed)) {
      problems.push(`${label}: no committed report ${committed.slice(ROOT.length)} (run npm run api:update)`);
    } else if (result.apiReportChanged) {
      problems.push(
        `${label}: the public API differs from ${committed.slice(ROOT.length)}:\n${showDiff(committed, fresh)}`,
      );
    } else {
      console.log(`${label}: matches ${committed.slice(ROOT.length)}`);
    }
  }
}

// A signature may use a type another entry exports (a user imports it from there); any other
// unexported type is one a user could not name.
for (const { label, name, message } of unexported) {
  if (!exported.has(name) && !entryNames.has(name)) problems.push(`${label}: ${message} (export it from ${label})`);
}

if (problems.length > 0) {
  console.error(`\n${problems.join("\n\n")}`);
  if (!update) console.error("\nIf the change is meant, run npm run api:update and commit the api/ files with it.");
  process.exit(1);
}
