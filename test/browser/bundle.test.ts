/**
 * The core in a browser (issue 28, point 2). esbuild bundles the page of page.ts (the core on memory
 * storage, the fetch adapter, the test kit's browser build, the msw helper, the conformance cases)
 * with platform "browser": no input imports a Node built-in. Then headless Chromium loads it and
 * every published conformance case runs in the page against createFetchHandler(store), no server.
 */
import { builtinModules } from "node:module";
import { build, type Metafile } from "esbuild";
import type { Page } from "playwright-core";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { conformanceCases } from "../../conformance/index.ts";
import { chromiumOrSkip, launchChromium } from "../support/chromium.ts";
import { ROOT } from "../support/program.ts";
import { fileOf, serveFiles } from "../support/static-server.ts";

const BUILTINS = new Set(builtinModules);

/** `entry` (a file, or the text of one) bundled for a browser: its text and esbuild's metafile. */
async function bundle(entry: { file: string } | { text: string }): Promise<{ text: string; metafile: Metafile }> {
  const result = await build({
    absWorkingDir: ROOT,
    ...("file" in entry
      ? { entryPoints: [entry.file] }
      : { stdin: { contents: entry.text, resolveDir: ROOT, loader: "ts" as const } }),
    bundle: true,
    platform: "browser",
    format: "esm",
    metafile: true,
    write: false,
    logLevel: "silent",
  });
  return { text: result.outputFiles[0]?.text ?? "", metafile: result.metafile };
}

/** Every import of a Node built-in (node:x, or x that is one) in the metafile's inputs, as "file -> module". */
function nodeImports(metafile: Metafile): string[] {
  const found: string[] = [];
  for (const [file, input] of Object.entries(metafile.inputs)) {
    for (const { path } of input.imports) {
      if (path.startsWith("node:") || BUILTINS.has(path)) found.push(`${file} -> ${path}`);
    }
    if (file.startsWith("node:") || BUILTINS.has(file)) found.push(file);
  }
  return found;
}

// An entry point (a file imported only for its effects would be dropped: the package has no side effects).
const PAGE = { file: "test/browser/page.ts" };

test("browser bundle: createPetStore, memoryStorage, createFetchHandler, createTestStore, petStoreHandlers and the conformance cases bundle with platform browser, no input importing a Node built-in", async () => {
  const { metafile } = await bundle(PAGE);
  assert.equal(nodeImports(metafile), []);
  const inputs = Object.keys(metafile.inputs);
  for (const needed of [
    "lib/index.ts",
    "adapters/fetch.ts",
    "adapters/msw.ts",
    "testing/browser.ts",
    "conformance/cases.ts",
  ]) {
    assert.ok(inputs.includes(needed), `${needed} is in the bundle`);
  }
  assert.not.ok(inputs.includes("testing/server.ts"), "the test server (node:http) is not");
});

test("browser bundle: petstore-lib with memory storage leaves SQLite, Redis, Postgres and Keyv out (sideEffects: false)", async () => {
  const { metafile } = await bundle({
    text:
      'import { createPetStore, memoryStorage } from "./lib/index.ts"; import { createFetchHandler } from "./adapters/fetch.ts";\n' +
      'export const handle = createFetchHandler(createPetStore({ storage: memoryStorage(), auth: ["k"] }));',
  });
  assert.equal(nodeImports(metafile), []);
  const shipped = Object.keys(Object.values(metafile.outputs)[0]?.inputs ?? {});
  const backends = shipped.filter((file) => /lib\/storage\/(sqlite|redis|postgres|driver)/.test(file));
  assert.equal(backends, [], "no backend's code in the output");
  assert.not.ok(
    shipped.some((file) => file.startsWith("node_modules/keyv/")),
    "no Keyv: memory storage keeps its pets without it",
  );
});

const cases = conformanceCases();
if (chromiumOrSkip("the conformance cases inside headless Chromium (the store in the page)")) {
  let close: (() => Promise<void>) | undefined;
  let page: Page;
  let results: Record<string, string> = {};
  let setupError: unknown;

  // uvu reports no error of a hook: a failed set-up is kept and fails every test with its message.
  test.before(async () => {
    try {
      await setUp();
    } catch (error) {
      setupError = error;
    }
  });

  async function setUp(): Promise<void> {
    const { text } = await bundle(PAGE);
    const site = await serveFiles({
      "/": fileOf("index.html", '<!doctype html><meta charset="utf-8"><script type="module" src="/page.js"></script>'),
      "/page.js": fileOf("page.js", text),
    });
    const chromium = await launchChromium();
    close = async () => {
      await chromium.close();
      await site.close();
    };
    page = await chromium.context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${site.origin}/`);
    await page.waitForFunction(() => "petstore" in globalThis);
    assert.equal(errors, [], "the page loads without an error");
    results = await page.evaluate(() =>
      (
        globalThis as unknown as { petstore: { runConformance(): Promise<Record<string, string>> } }
      ).petstore.runConformance(),
    );
  }

  test.after(async () => {
    await close?.();
  });

  for (const c of cases) {
    test(`in Chromium, the store in the page: ${c.name}`, () => {
      if (setupError !== undefined) throw setupError;
      assert.ok(c.name in results, "the case ran in the page");
      assert.is(results[c.name], "", results[c.name]);
    });
  }

  test("in Chromium: createTestStore seeds, numbers request ids, fails on failNext, waits on delay and starts again on reset, in the page", async () => {
    if (setupError !== undefined) throw setupError;
    const kit = (await page.evaluate(() =>
      (globalThis as unknown as { petstore: { runTestKit(): Promise<unknown> } }).petstore.runTestKit(),
    )) as {
      seeded: string[];
      created: number;
      afterCreate: string[];
      failed: unknown[];
      delayedMs: number;
      afterReset: unknown[];
      mswHandlers: number;
    };
    assert.equal(kit.seeded, ["pet-1", "pet-2"]);
    assert.is(kit.created, 201);
    assert.equal(kit.afterCreate, ["pet-1", "pet-2", "Page Rex"]);
    assert.equal(kit.failed, [503, "1"]);
    assert.ok(kit.delayedMs >= 45, `delay(50) held the answer (${kit.delayedMs} ms)`);
    assert.equal(kit.afterReset, [2, "req-1"]);
    assert.ok(kit.mswHandlers >= 1, "petStoreHandlers builds msw handlers in the page");
  });
} else {
  test.skip("in Chromium: the conformance cases with the store in the page");
}

test.run();
