/**
 * The client runs wherever fetch does (browsers, Workers, Deno, Bun): bundled as a page or a
 * Worker would bundle it, it holds only client/ and the core's error table, option check and
 * nextCursor (no runtime dependency, no `node:` import), and it runs in workerd without `nodejs_compat`.
 */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLIENT_BUNDLE_LIMIT_KB } from "../../bench/bundle.ts";
import type { TestServer } from "../../testing/index.ts";
import { startTestServer } from "../../testing/index.ts";

const ENTRY = fileURLToPath(new URL("../../client/index.ts", import.meta.url));

/** The client bundled as a page or a Worker bundles it; `worker`: a Worker's module using it. */
async function bundle(worker?: string) {
  const entry =
    worker === undefined
      ? { entryPoints: [ENTRY] }
      : {
          stdin: {
            contents: worker,
            resolveDir: fileURLToPath(new URL("../..", import.meta.url)),
            sourcefile: "worker.js",
          },
        };
  const result = await build({
    ...entry,
    bundle: true,
    minify: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    metafile: true,
    write: false,
    logLevel: "silent",
  });
  return { text: result.outputFiles[0]?.text ?? "", inputs: Object.keys(result.metafile.inputs) };
}

test("bundle: only client/, lib/errors.ts, lib/options.ts and lib/next-cursor.ts; no node: import, no package; within K2's limit", async () => {
  const { text, inputs } = await bundle();
  const core = ["lib/errors.ts", "lib/options.ts", "lib/next-cursor.ts"];
  const outside = inputs.filter((file) => !/^client\//.test(file) && !core.includes(file));
  assert.equal(outside, [], "nothing else is bundled");
  assert.not.match(text, /["']node:/);
  assert.ok(text.length / 1000 <= CLIENT_BUNDLE_LIMIT_KB, `${text.length} bytes`);
});

let server: TestServer | undefined;
test.after(() => server?.close());

test("workerd, without nodejs_compat: the bundled client lists, creates with a key and pages through a test server", async () => {
  const { Miniflare } = await import("miniflare");
  server = await startTestServer({ pets: 3 });
  const { text: worker } = await bundle(`import { createPetStoreClient } from "./client/index.ts";
export default {
  async fetch(request, env) {
    const pets = createPetStoreClient({ baseUrl: env.BASE, key: env.KEY });
    const created = await pets.createPet({ name: "Rex", categoryId: 1 }, { idempotencyKey: "w-1" });
    const names = [];
    for await (const pet of pets.pets({ limit: 2 })) names.push(pet.name);
    const missing = await pets.getPet(99).catch((e) => e.code + " " + e.status);
    return Response.json({ created, names, missing });
  },
};`);
  const mf = new Miniflare({
    modules: true,
    script: worker,
    compatibilityDate: "2026-01-01",
    bindings: { BASE: server.url, KEY: server.key },
  });
  try {
    const answer = (await (await mf.dispatchFetch("http://worker.test/")).json()) as Record<string, unknown>;
    assert.equal(answer, {
      created: { pet: { id: 4, name: "Rex", categoryId: 1, status: "available" }, replayed: false },
      names: ["pet-1", "pet-2", "pet-3", "Rex"],
      missing: "pet_not_found 404",
    });
  } finally {
    await mf.dispose();
  }
});

test.run();
