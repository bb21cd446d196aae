/**
 * README "Fastify and Express": each snippet, as it is in the README (its port aside), runs in a
 * fresh project where the packed package and the framework are installed, and serves the API: one
 * authorised request is answered. Each is under 15 lines of user code.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanUp, consumer, ROOT, run, startNode, versionOf, whenUp } from "../support/packed.ts";

const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The ```js blocks of the README section `heading`. */
function snippets(heading: string): string[] {
  const from = README.indexOf(`\n## ${heading}\n`);
  assert.ok(from !== -1, `README has a "## ${heading}" section`);
  const to = README.indexOf("\n## ", from + 1);
  const section = README.slice(from, to === -1 ? undefined : to);
  return [...section.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

/** A port nobody listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let dir = "";
test.before(() => {
  dir = consumer([
    `fastify@${versionOf("fastify")}`,
    `express@${versionOf("express")}`,
    `@types/node@${versionOf("@types/node")}`,
  ]);
});
test.after(cleanUp);

const [fastifySnippet, expressSnippet] = snippets("Fastify and Express");

for (const [name, snippet] of [
  ["Fastify", fastifySnippet],
  ["Express", expressSnippet],
] as const) {
  test(`README: the ${name} snippet serves the API from the packed package in under 15 lines`, async () => {
    assert.ok(snippet, `the section has the ${name} snippet`);
    const lines = snippet.split("\n").filter((l) => l.trim() !== "").length;
    assert.ok(lines < 15, `${lines} lines`);
    assert.ok(snippet.includes("3000"), "it listens on port 3000");
    const port = await freePort();
    const file = `${name.toLowerCase()}.mjs`;
    writeFileSync(join(dir, file), snippet.replaceAll("3000", String(port)));
    const running = startNode(dir, file);
    try {
      const key = /auth: \["([^"]+)"\]/.exec(snippet)?.[1] ?? "";
      const url = `http://127.0.0.1:${port}/v1/pets`;
      const created = await whenUp(
        url,
        {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: '{"name":"Rex","categoryId":1}',
        },
        running,
      );
      assert.is(created.status, 201, running.output());
      assert.is(await created.text(), '{"id":1,"name":"Rex","categoryId":1,"status":"available"}');
      assert.is(created.headers.get("x-powered-by"), null);
    } finally {
      await running.stop();
    }
  });
}

test("package: a strict TypeScript consumer type-checks against the Fastify plugin's and the conformance module's .d.ts files", () => {
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ["node"],
      },
      files: ["consumer.ts"],
    }),
  );
  writeFileSync(
    join(dir, "consumer.ts"),
    `import Fastify from "fastify";
import { createPetStore } from "petstore-lib";
import type { ConformanceCase, FetchTarget, SocketTarget } from "petstore-lib/conformance";
import { conformanceCases } from "petstore-lib/conformance";
import { petStoreFrameworkErrors, petStorePlugin } from "petstore-lib/fastify";

const store = createPetStore({ auth: ["k"] });
const app = Fastify({ frameworkErrors: petStoreFrameworkErrors(store) });
await app.register(petStorePlugin, { store, prefix: "" });
const cases: ConformanceCase[] = conformanceCases();
const overSocket: SocketTarget = { basePath: "/v1", key: "k", reset() {}, url: "http://127.0.0.1:1" };
const inProcess: FetchTarget = { basePath: "/v1", key: "k", reset: async () => {}, fetch: async () => new Response() };
const runs: Promise<void>[] = cases.map((c) => c.run(overSocket)).concat(cases.map((c) => c.run(inProcess)));
void runs;
// @ts-expect-error the plugin needs a store
await app.register(petStorePlugin, {});
// @ts-expect-error a target has a url or a fetch
cases[0]?.run({ basePath: "/v1", key: "k", reset() {} });
`,
  );
  run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], dir, 90_000);
});

test.run();
