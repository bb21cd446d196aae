/**
 * examples/cloudflare-worker: bundled as wrangler would (esbuild, ES module) from the `main` of its
 * wrangler.toml, run by workerd through Miniflare with the toml's compatibility date and flags and
 * the key as a secret binding.
 */
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { WORKER_BUNDLE_LIMIT_KB } from "../../bench/bundle.ts";
import { ROOT } from "../support/program.ts";
import { bundleWorker, startWorker } from "../support/worker.ts";

const toml = readFileSync(`${ROOT}/examples/cloudflare-worker/wrangler.toml`, "utf8");
const setting = (name: string) => new RegExp(`^${name} = (.+)$`, "m").exec(toml)?.[1] ?? "";

test("examples/cloudflare-worker: its wrangler.toml names the worker, its entry and nodejs_compat", () => {
  assert.is(setting("name"), '"petstore"');
  assert.is(setting("main"), '"worker.ts"');
  assert.match(setting("compatibility_date"), /^"\d{4}-\d{2}-\d{2}"$/);
  assert.is(setting("compatibility_flags"), '["nodejs_compat"]');
});

test("examples/cloudflare-worker: .dev.vars, where wrangler.toml says to put the key for wrangler dev, is ignored by git", () => {
  assert.match(toml, /PETSTORE_API_KEY=\.\.\. in a \.dev\.vars file/);
  const ignored = readFileSync(`${ROOT}/.gitignore`, "utf8").split("\n");
  assert.ok(ignored.includes(".dev.vars"), ".gitignore lists .dev.vars (any folder)");
});

test("examples/cloudflare-worker: workerd serves the pet store with the key from env: 401, 201 with Location, the list, HEAD, getPet", async () => {
  const main = JSON.parse(setting("main"));
  const script = await bundleWorker(`${ROOT}/examples/cloudflare-worker/${main}`);
  const { url, mf } = await startWorker(script, {
    compatibilityDate: JSON.parse(setting("compatibility_date")),
    compatibilityFlags: JSON.parse(setting("compatibility_flags")),
    bindings: { PETSTORE_API_KEY: "secret-key" },
  });
  try {
    const auth = { authorization: "Bearer secret-key" };
    const anonymous = await fetch(new URL("v1/pets", url));
    assert.is(anonymous.status, 401);
    assert.is(anonymous.headers.get("www-authenticate"), 'Bearer realm="petstore"');
    await anonymous.text();
    const created = await fetch(new URL("v1/pets", url), {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "Tom", categoryId: 2 }),
    });
    assert.is(created.status, 201);
    assert.is(created.headers.get("location"), "/v1/pets/1");
    assert.is(await created.text(), '{"id":1,"name":"Tom","categoryId":2,"status":"available"}');
    const list = await fetch(new URL("v1/pets", url), { headers: auth });
    assert.is(await list.text(), '[{"id":1,"name":"Tom","categoryId":2,"status":"available"}]');
    const head = await fetch(new URL("v1/pets", url), { method: "HEAD", headers: auth });
    assert.is(head.status, 200);
    assert.is(await head.text(), "");
    const one = await fetch(new URL("v1/pets/1", url), { headers: auth });
    assert.is(one.headers.get("deprecation"), "@1795564800");
    assert.is(((await one.json()) as { name: string }).name, "Tom");
  } finally {
    await mf.dispose();
  }
});

test("examples/cloudflare-worker: the Worker bundle (core + fetch adapter + memory storage, minified) is under 150 KB", async () => {
  const script = await bundleWorker(`${ROOT}/examples/cloudflare-worker/worker.ts`);
  const kb = Buffer.byteLength(script) / 1000;
  assert.ok(kb > 10, `a real bundle (${kb} KB)`);
  assert.ok(kb <= WORKER_BUNDLE_LIMIT_KB, `${kb} KB`);
});

test.run();
