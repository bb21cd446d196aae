/**
 * The API reference page at GET /docs of the standalone server (a real child process on PORT=0),
 * checked over HTTP and then driven in headless Chromium (Debian `chromium`): the page shows the
 * three operations, the Pets schema as `array<Pet>`, the server it was served from (not the
 * document's `{baseUrl}` variable) in the server selector, and a key pasted in "Authorize" makes
 * "Try it out" → "Execute" answer 200 on listPets and 201 on createPet. Without chromium the
 * browser test is skipped loudly, except under CI=true, where it fails.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chromiumOrSkip, launchChromium } from "../support/chromium.ts";
import { type Child, spawnServer, startedUrl } from "../support/server-child.ts";

const KEY = "docs-browser-key-5f2b8c";

let child: Child | undefined;
let base: URL;

test.before(async () => {
  child = spawnServer({ PORT: "0", PETSTORE_API_KEYS: KEY, LOG_LEVEL: "warn" });
  base = await startedUrl(child);
  const created = await fetch(`${base}/pets`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "Docs Rex", categoryId: 4 }),
  });
  assert.is(created.status, 201);
});

test.after(async () => {
  if (child === undefined) return;
  child.process.kill("SIGTERM");
  await child.exited().catch(() => child?.stop());
});

test("docs: GET /docs serves the Swagger UI page, its scripts from this server only, pointing at {base}/openapi.json", async () => {
  const res = await fetch(new URL("/docs", base));
  assert.is(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
  assert.match(res.headers.get("content-security-policy") ?? "", /script-src 'self'/);
  const html = await res.text();
  const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
  assert.ok(sources.length >= 3);
  for (const source of sources) assert.ok(source.startsWith("/docs/"), `${source} is not served by this server`);
  const init = await (await fetch(new URL("/docs/init.js", base))).text();
  assert.match(init, /"url":"\/v1\/openapi\.json"/);
  assert.match(init, /"persistAuthorization":false/, "a pasted key is never kept in the browser's storage");
});

test("docs: the document the page shows has no OPTIONS operation while CORS is off (PETSTORE_CORS_ORIGINS unset)", async () => {
  const doc = (await (await fetch(new URL("/v1/openapi.json", base))).json()) as { paths: Record<string, object> };
  const methods = Object.values(doc.paths).flatMap((item) => Object.keys(item));
  assert.equal([...new Set(methods)].sort(), ["get", "post"]);
});

test("docs: the Swagger UI files are the swagger-ui-dist package's own", async () => {
  const dist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  for (const name of ["swagger-ui-bundle.js", "swagger-ui.css"]) {
    const res = await fetch(new URL(`/docs/${name}`, base));
    assert.is(res.status, 200, name);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(readFileSync(join(dist, name))), name);
  }
});

test("docs: HEAD /docs answers like GET without a body; POST /docs is refused with 405 and Allow: GET, HEAD", async () => {
  const head = await fetch(new URL("/docs", base), { method: "HEAD" });
  assert.is(head.status, 200);
  assert.is(await head.text(), "");
  const post = await fetch(new URL("/docs", base), { method: "POST", body: "x" });
  assert.is(post.status, 405);
  assert.is(post.headers.get("allow"), "GET, HEAD");
  const unknown = await fetch(new URL("/docs/nothing.js", base));
  assert.is(unknown.status, 404);
});

test("docs: {base}/openapi.json is served by the standalone server without a key", async () => {
  const res = await fetch(`${base}/openapi.json`);
  assert.is(res.status, 200);
  const doc = (await res.json()) as { openapi: string; info: { version: string } };
  assert.equal([doc.openapi, doc.info.version], ["3.1.0", "1.0.0"]);
});

const browserRule =
  "docs in headless Chromium: the page shows the three operations (no CORS preflight: CORS is off), Pets as array<Pet> and this server in the selector; 'Try it out' with a key answers 200 on listPets and 201 on createPet";

if (chromiumOrSkip(browserRule)) {
  test(browserRule, async () => {
    const { context, close } = await launchChromium();
    try {
      const page = await context.newPage();
      const requested: { url: string; authorization: string | undefined }[] = [];
      page.on("request", (r) => requested.push({ url: r.url(), authorization: r.headers().authorization }));

      await page.goto(new URL("/docs", base).href);
      await page.locator("#operations-pets-getPet").waitFor();
      const ids = await page.locator(".opblock-summary-operation-id").allTextContents();
      assert.equal(ids.sort(), ["createPet", "getPet", "listPets"]);

      // The server selector offers the server the page came from, as a real URL.
      const servers = await page.locator(".servers select option").allTextContents();
      assert.equal(servers, [`${base.origin}${base.pathname} - This server`]);

      // The Pets schema names its items (as displayed: Swagger UI would lower-case type labels).
      const pets = page.locator("section.models .json-schema-2020-12").filter({ hasText: /^Pets/ }).first();
      const label = pets.locator(".json-schema-2020-12__attribute--primary").first();
      // biome-ignore lint/performance/useDomNodeTextContent: the label as displayed, after the page's CSS
      assert.is(await label.innerText(), "array<Pet>");

      // Paste the key in "Authorize".
      await page.getByRole("button", { name: "Authorize" }).first().click();
      const modal = page.locator(".modal-ux");
      await modal.locator("input").first().fill(KEY);
      await modal.getByRole("button", { name: "Apply credentials" }).click();
      await modal.getByRole("button", { name: "Close" }).click();

      // Try listPets from the page.
      const op = page.locator("#operations-pets-listPets");
      await op.locator(".opblock-summary").click();
      await op.getByRole("button", { name: "Try it out" }).click();
      await op.getByRole("button", { name: "Execute" }).click();
      const status = op.locator(".live-responses-table .response .response-col_status").first();
      await status.waitFor();
      assert.is((await status.textContent())?.trim(), "200");
      const shown = await op.locator(".live-responses-table .response-col_description pre").first().textContent();
      assert.match(shown ?? "", /Docs Rex/);

      const listCall = requested.find((r) => new URL(r.url).pathname === `${base.pathname}/pets`);
      assert.is(listCall?.authorization, `Bearer ${KEY}`);

      // Try createPet from the page, with the example body it offers.
      const create = page.locator("#operations-pets-createPet");
      await create.locator(".opblock-summary").click();
      await create.getByRole("button", { name: "Try it out" }).click();
      const bodyEditor = create.locator("textarea.body-param__text");
      await bodyEditor.fill('{ "name": "Page Rex", "categoryId": 2 }');
      await create.getByRole("button", { name: "Execute" }).click();
      const created = create.locator(".live-responses-table .response .response-col_status").first();
      await created.waitFor();
      assert.is((await created.textContent())?.trim(), "201");
      const body = await create.locator(".live-responses-table .response-col_description pre").first().textContent();
      assert.match(body ?? "", /"name": "Page Rex"/);
      const posted = requested.find((r) => r.url === `${base.href}/pets` && r.authorization !== undefined);
      assert.ok(posted, "the page called this server's /pets");
      // The pet is really there, seen from outside the page.
      const list = await fetch(`${base}/pets`, { headers: { authorization: `Bearer ${KEY}` } });
      assert.ok(((await list.json()) as { name: string }[]).some((p) => p.name === "Page Rex"));
      // No CDN: every file the page needed came from the server itself.
      for (const r of requested) assert.is(new URL(r.url).origin, base.origin, r.url);
    } finally {
      await close();
    }
  });
} else {
  test.skip(browserRule);
}

test.run();
