/**
 * CORS in a real browser (issue 28, point 1). The standalone server runs on one origin with
 * PETSTORE_CORS_ORIGINS naming a page's origin; headless Chromium loads that page from another
 * port, lists pets (reading Link and X-Request-Id), creates one with an Idempotency-Key (after the
 * browser's own preflight), and reads a 401's Error body. The same page from a third, disallowed
 * origin is blocked: its fetch rejects, as a browser blocks any answer without CORS headers.
 */
import type { Page } from "playwright-core";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chromiumOrSkip, launchChromium } from "../support/chromium.ts";
import { type Child, jsonLines, spawnServer, startedUrl } from "../support/server-child.ts";
import { fileOf, serveFiles } from "../support/static-server.ts";

const KEY = "browser-cors-key-3c9d";

/** The page: its script calls the API named in `?api=` as a front end would. */
const PAGE = `<!doctype html><meta charset="utf-8"><script>
const api = new URL(location.href).searchParams.get("api");
const auth = { authorization: "Bearer ${KEY}" };
async function read(res) {
  return { status: res.status, body: await res.json(), headers: Object.fromEntries(
    ["link", "x-request-id", "location", "idempotent-replayed", "www-authenticate", "content-type"]
      .map((name) => [name, res.headers.get(name)])) };
}
globalThis.callApi = async () => {
  const list = await read(await fetch(api + "/pets?limit=1", { headers: auth }));
  const create = () => fetch(api + "/pets", { method: "POST", body: JSON.stringify({ name: "Page Rex", categoryId: 2 }),
    headers: { ...auth, "content-type": "application/json", "idempotency-key": "browser-create-1" } });
  const created = await read(await create());
  const replayed = await read(await create());
  const refused = await read(await fetch(api + "/pets/1"));
  return { list, created, replayed, refused };
};
globalThis.tryApi = () => fetch(api + "/pets", { headers: auth }).then((res) => "answered " + res.status, (error) => error.name + ": " + error.message);
</script>`;

const rule =
  "CORS in headless Chromium: a page from the allowed origin lists pets (Link, X-Request-Id), creates one with an Idempotency-Key after its preflight, reads a 401's Error body; a page from another origin is blocked";

if (chromiumOrSkip(rule)) {
  test(rule, async () => {
    const allowed = await serveFiles({ "/": fileOf("index.html", PAGE) });
    const other = await serveFiles({ "/": fileOf("index.html", PAGE) });
    let server: Child | undefined;
    const chromium = await launchChromium();
    try {
      server = spawnServer({
        PORT: "0",
        PETSTORE_API_KEYS: KEY,
        PETSTORE_CORS_ORIGINS: allowed.origin,
        LOG_LEVEL: "info",
      });
      const api = (await startedUrl(server)).href;
      for (let i = 1; i <= 2; i++) {
        const seeded = await fetch(`${api}/pets`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: JSON.stringify({ name: `Seed ${i}`, categoryId: 1 }),
        });
        assert.is(seeded.status, 201);
      }
      const open = async (origin: string): Promise<Page> => {
        const page = await chromium.context.newPage();
        await page.goto(`${origin}/?api=${encodeURIComponent(api)}`);
        return page;
      };

      const page = await open(allowed.origin);
      // biome-ignore lint/suspicious/noExplicitAny: the page's own global
      const got = (await page.evaluate(() => (globalThis as any).callApi())) as Record<
        "list" | "created" | "replayed" | "refused",
        Answer
      >;
      assert.is(got.list.status, 200);
      assert.equal(
        (got.list.body as { name: string }[]).map((p) => p.name),
        ["Seed 1"],
      );
      assert.match(
        got.list.headers.link ?? "",
        /^<\/v1\/pets\?limit=1&cursor=[a-z0-9]+>; rel="next"$/,
        "Link is exposed",
      );
      assert.match(got.list.headers["x-request-id"] ?? "", /^[A-Za-z0-9._-]+$/, "X-Request-Id is exposed");
      assert.is(got.created.status, 201);
      assert.is(got.created.headers.location, "/v1/pets/3", "Location is exposed");
      assert.equal([got.replayed.status, got.replayed.headers["idempotent-replayed"]], [201, "true"]);
      assert.equal((got.replayed.body as { id: number }).id, 3, "the retry replays the create");
      assert.is(got.refused.status, 401);
      assert.equal(got.refused.body, {
        code: "unauthorized",
        message: "A valid API key is required. Send the key as Authorization: Bearer <key>.",
        status: 401,
      });
      assert.is(got.refused.headers["www-authenticate"], 'Bearer realm="petstore"', "WWW-Authenticate is exposed");

      const blocked = await open(other.origin);
      // biome-ignore lint/suspicious/noExplicitAny: the page's own global
      const outcome = await blocked.evaluate(() => (globalThis as any).tryApi());
      assert.match(outcome, /^TypeError: /, "the disallowed origin's fetch rejects");

      // The server saw the browser's preflights (answered 204 before any key) and the requests.
      // Its log lines reach stdout up to 200 ms late (they are written in batches): the other
      // origin's preflight, refused 405, is the last request, so the lines are all in once it is.
      await (server as Child).line(/"method":"OPTIONS".*"status":405/, 5000);
      const logs = jsonLines(server.stdout()).filter((line) => line.method !== undefined);
      const preflights = logs.filter((line) => line.method === "OPTIONS");
      assert.ok(preflights.length >= 1, "the browser sent a preflight");
      assert.ok(preflights.every((line) => line.status === 204 || line.status === 405));
      assert.ok(
        preflights.some((line) => line.status === 204),
        "the allowed origin's preflight: 204",
      );
    } finally {
      await chromium.close();
      if (server !== undefined) {
        server.process.kill("SIGTERM");
        await server.exited().catch(() => server?.stop());
      }
      await allowed.close();
      await other.close();
    }
  });
} else {
  test.skip(rule);
}

interface Answer {
  status: number;
  body: unknown;
  headers: Record<string, string | null>;
}

test.run();
