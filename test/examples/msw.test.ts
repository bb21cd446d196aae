/**
 * examples/msw: the front end's tests in Node run as the user runs them (`uvu -r tsx
 * examples/msw`), and the browser page (examples/msw/serve.ts) registers the committed
 * mockServiceWorker.js in headless Chromium, where the page's fetch to https://api.example/v1 is
 * answered by the test store in the page: seeded pets, an idempotent retry, failNext, delay, reset.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chromiumOrSkip, launchChromium } from "../support/chromium.ts";
import { runProgram, startProgram } from "../support/program.ts";

test("examples/msw: the front end's uvu tests against the mock in Node (msw/node) all pass", async () => {
  const { code, stdout, stderr } = await runProgram(
    ["node_modules/uvu/bin.js", "-r", "tsx", "examples/msw", "\\.test\\.ts$"],
    { NO_COLOR: "1", FORCE_COLOR: "0" },
  );
  // biome-ignore lint/suspicious/noControlCharactersInRegex: uvu may colour its summary.
  const plain = stdout.replace(/\u001b\[[0-9;]*m/g, "");
  assert.is(code, 0, `uvu failed:\n${plain}\n${stderr}`);
  assert.is(Number(/Passed:\s+(\d+)/.exec(plain)?.[1]), 4, plain);
});

const browserRule =
  "examples/msw in headless Chromium: the service worker answers the page's fetch to https://api.example/v1 from the test store in the page (seeding, an idempotent retry, failNext, delay, reset)";
if (chromiumOrSkip(browserRule)) {
  test(browserRule, async () => {
    const server = startProgram(["examples/msw/serve.ts"], { PORT: "0" });
    const chromium = await launchChromium().catch(async (error) => {
      await server.kill();
      throw error;
    });
    try {
      const url = /serving on (\S+)/.exec(await server.line(/serving on /, 30_000))?.[1] as string;
      const page = await chromium.context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(url);
      await page.waitForFunction(() => "petStoreDemo" in globalThis, undefined, { timeout: 20_000, polling: 100 });
      assert.equal(errors, []);
      const demo = (await page.evaluate(
        () => (globalThis as unknown as { petStoreDemo: unknown }).petStoreDemo,
      )) as Record<string, unknown>;
      const first = demo.first as { names: string[]; next: string; requestId: string };
      assert.equal(first.names, ["Rex", "Tom"], "the seeded pets, through the service worker");
      assert.match(first.next, /^\/v1\/pets\?limit=2&cursor=/, "Link is readable");
      assert.ok(first.requestId, "X-Request-Id is readable");
      const added = demo.added as { status: number; id: number };
      assert.equal(demo.retried, { status: 201, id: added.id, replayed: true });
      assert.equal(demo.afterAdd, ["Rex", "Tom", "Kiki", "Nemo"]);
      assert.is(demo.outage, "listPets: 503 storage_unavailable");
      assert.ok((demo.delayedMs as number) >= 95, `delay(100) held the answer (${demo.delayedMs} ms)`);
      assert.equal(demo.afterReset, ["Rex", "Tom", "Kiki"]);
      type Worker = { serviceWorker: { controller: { scriptURL: string } | null } };
      const controlled = await page.evaluate(
        () => (globalThis as unknown as { navigator: Worker }).navigator.serviceWorker.controller?.scriptURL,
      );
      assert.is(controlled, new URL("/mockServiceWorker.js", url).href, "the page is controlled by msw's worker");
    } finally {
      await chromium.close();
      await server.kill();
    }
  });
} else {
  test.skip(browserRule);
}

test.run();
