/**
 * The packages as users get them. A copy of the repository is built (`npm run build`) and packed
 * (`npm pack` and `npm run pack:server`, test/support/tarball.ts); both tarballs are installed into
 * a fresh temporary project (from the npm cache where possible), where (a) a JavaScript program
 * imports the compiled core, adapters and petstore-server's docs page, (b) a TypeScript consumer is
 * type-checked against the shipped .d.ts files, and (c) petstore-server's `bin` starts a server. A
 * second project holds the library alone: the moved entries say what to install. Nothing here
 * touches the repository's own dist/ or node_modules/.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { installInto, serverProject } from "../support/packed.ts";
import { ROOT } from "../support/program.ts";
import { packedPackage, run } from "../support/tarball.ts";

const TMP = mkdtempSync(join(tmpdir(), "petstore-pack-"));
let CONSUMER = "";
const KEY = "pack-smoke-key-0123456789";

const repoPkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const serverPkg = JSON.parse(readFileSync(join(ROOT, "server", "package.json"), "utf8"));
const binName = Object.keys(serverPkg.bin ?? {})[0];

let tarball = "";
let packed: { path: string }[] = [];

test.before(() => {
  ({ tarball, files: packed } = packedPackage());
  // Both tarballs, hapi (an optional peer the hapi check needs) and Node's types for tsc.
  CONSUMER = serverProject();
});

test.after(() => {
  rmSync(TMP, { recursive: true, force: true });
});

test("package: the tarball holds the compiled library and its docs, and no tests, benches, sources or dangling maps", () => {
  const paths = packed.map((f) => f.path);
  const set = new Set(paths);
  for (const required of ["package.json", "README.md", "CHANGELOG.md", "dist/lib/index.js", "dist/lib/index.d.ts"]) {
    assert.ok(set.has(required), `${required} is in the tarball`);
  }
  // Every entry point package.json names exists in the tarball.
  const targets: string[] = [];
  const collect = (value: unknown) => {
    if (typeof value === "string") targets.push(value.replace(/^\.\//, ""));
    else if (value && typeof value === "object") for (const v of Object.values(value)) collect(v);
  };
  collect(repoPkg.exports);
  collect(repoPkg.bin);
  collect(repoPkg.main);
  collect(repoPkg.types);
  for (const target of targets) assert.ok(set.has(target), `package.json names ${target}, which is in the tarball`);
  assert.is(repoPkg.bin, undefined, "the library has no bin: `petstore` is petstore-server's");
  for (const name of ["pino", "prom-client", "swagger-ui-dist", "@opentelemetry/sdk-trace"]) {
    assert.not.ok(name in (repoPkg.dependencies ?? {}), `${name} is not the library's dependency`);
    assert.not.ok(name in (repoPkg.peerDependencies ?? {}), `${name} is not the library's peer`);
  }

  const unwanted = paths.filter(
    (p) =>
      /(^|\/)(test|tests|bench|examples|scripts|\.ci|\.tmp|node_modules)\//.test(p) ||
      /\.test\.[cm]?[jt]s$/.test(p) ||
      (/\.[cm]?ts$/.test(p) && !/\.d\.[cm]?ts$/.test(p)) ||
      /\.tgz$|\.db$|\.cpuprofile$/.test(p),
  );
  assert.equal(unwanted, [], "no tests, benches, examples, TypeScript sources or stray files");

  const extracted = join(TMP, "extracted");
  mkdirSync(extracted);
  run("tar", ["-xzf", tarball, "-C", extracted], TMP);
  // Every relative import of a shipped module names a file that ships (the bundles' chunks too).
  for (const path of paths.filter((p) => /\.[cm]?js$/.test(p))) {
    const text = readFileSync(join(extracted, "package", path), "utf8");
    for (const [, specifier] of text.matchAll(
      /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"'\n]+)["']/g,
    )) {
      const target = join(path, "..", specifier as string);
      assert.ok(set.has(target), `${path} imports ${specifier}, which ships`);
    }
  }

  // A source map (or a sourceMappingURL) must point at files that ship.
  for (const path of paths) {
    const file = join(extracted, "package", path);
    if (path.endsWith(".map")) {
      const map = JSON.parse(readFileSync(file, "utf8")) as { sources?: string[] };
      for (const source of map.sources ?? []) {
        assert.ok(existsSync(join(file, "..", source)), `${path} points at ${source}, which ships`);
      }
    } else if (/\.[cm]?js$|\.d\.[cm]?ts$/.test(path)) {
      const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(file, "utf8"))?.[1];
      if (url !== undefined && !url.startsWith("data:")) {
        assert.ok(set.has(join(path, "..", url)), `${path} names the map ${url}, which ships`);
      }
    }
  }
});

test("package: a browser bundle (esbuild, platform browser) of petstore-lib, /fetch and /testing from the installed package imports no Node built-in; /testing is its browser build", async () => {
  writeFileSync(
    join(CONSUMER, "page.mjs"),
    `import { createPetStore, memoryStorage } from "petstore-lib";
import { createFetchHandler } from "petstore-lib/fetch";
import { createTestStore } from "petstore-lib/testing";
export const handle = createFetchHandler(createPetStore({ storage: memoryStorage(), auth: ["k"] }));
export const kit = () => createTestStore({ pets: 1 });
`,
  );
  const { build } = await import("esbuild");
  const { metafile } = await build({
    absWorkingDir: CONSUMER,
    entryPoints: ["page.mjs"],
    bundle: true,
    platform: "browser",
    format: "esm",
    metafile: true,
    write: false,
    logLevel: "silent",
  });
  const builtins = new Set(builtinModules);
  const nodeImports = Object.entries(metafile.inputs).flatMap(([file, input]) =>
    input.imports.filter((i) => i.path.startsWith("node:") || builtins.has(i.path)).map((i) => `${file} -> ${i.path}`),
  );
  assert.equal(nodeImports, []);
  const inputs = Object.keys(metafile.inputs);
  assert.ok(inputs.includes("node_modules/petstore-lib/dist/testing/browser.js"), "the browser build of /testing");
  assert.not.ok(inputs.includes("node_modules/petstore-lib/dist/testing/server.js"), "not the test server");
  assert.ok(inputs.includes("node_modules/buffer/index.js"), "Keyv's import of buffer: the dependency");
});

test("package: a JavaScript program runs the compiled core, the adapter kit, the client's nextCursor, the Node adapter, the hapi plugin, the docs handler and the test kit from dist/", () => {
  writeFileSync(
    join(CONSUMER, "app.mjs"),
    `import { createServer } from "node:http";
import { createRequire } from "node:module";
import Hapi from "@hapi/hapi";
import * as root from "petstore-lib";
import { createPetStore, isPetStoreError, openStorage, RuleViolation } from "petstore-lib";
import { isPromise, isUnderBasePath } from "petstore-lib/adapter";
import { nextCursor } from "petstore-lib/client";
import { createDocsHandler } from "petstore-server/docs";
import * as deprecatedDocs from "petstore-lib/docs";
import { startTestServer } from "petstore-lib/testing";
import { petStorePlugin } from "petstore-lib/hapi";
import { createNodeHandler } from "petstore-lib/node-http";

const result = {};
const where = createRequire(import.meta.url).resolve("petstore-lib");
result.resolved = where.slice(where.indexOf("node_modules"));

const store = createPetStore({ auth: ["${KEY}"] });
result.core = await store.createPet({ name: "Rex", categoryId: 1 });
result.kit = [isUnderBasePath("/v1/pets", store.basePath), isPromise(Promise.resolve()), root.isPromise === isPromise, root.nextCursor === nextCursor];
try { await store.getPet(99); } catch (error) { result.notFound = isPetStoreError(error, "pet_not_found"); }

const docs = createDocsHandler({ basePath: "/v1" });
result.deprecatedDocs = deprecatedDocs.createDocsHandler === createDocsHandler;
const server = createServer(createNodeHandler(store, { fallback: (req, res) => docs(req, res) || res.end("host") }));
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = "http://127.0.0.1:" + server.address().port;
const auth = { authorization: "Bearer ${KEY}" };
const created = await fetch(base + "/v1/pets", { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: '{"name":"Tom","categoryId":2}' });
result.created = [created.status, await created.json()];
const list = await fetch(base + "/v1/pets", { headers: auth });
result.list = [list.status, await list.json()];
result.host = await (await fetch(base + "/elsewhere")).text();
const doc = await fetch(base + "/v1/openapi.json");
result.openapi = [doc.status, (await doc.json()).info.version];
// swagger-ui-dist comes with petstore-server: the page is served with nothing more to install.
const page = await fetch(base + "/docs");
result.docs = [page.status, page.headers.get("content-type"), /swagger/i.test(await page.text())];
server.close();
server.closeAllConnections();

const hapi = Hapi.server();
await hapi.register({ plugin: petStorePlugin, options: { store } });
const injected = await hapi.inject({ method: "GET", url: "/v1/pets/1", headers: auth });
result.hapi = [injected.statusCode, injected.result ? JSON.parse(injected.payload).name : null, injected.headers.deprecation];

const kit = await startTestServer({ pets: 2, rules: { beforeCreate: (p) => { if (p.categoryId > 3) throw new RuleViolation("unknown_category", "Not ours."); } } });
kit.failNext(1, { status: 503 });
const kitAuth = { authorization: "Bearer " + kit.key };
const failed = await fetch(kit.url + "/pets", { headers: kitAuth });
const kitList = await fetch(kit.url + "/pets", { headers: kitAuth });
const refused = await fetch(kit.url + "/pets", { method: "POST", headers: { ...kitAuth, "content-type": "application/json" }, body: '{"name":"x","categoryId":9}' });
result.testing = [kit.url.startsWith("http://127.0.0.1:") && kit.url.endsWith("/v1"), failed.status, (await kitList.json()).length, refused.status, (await refused.json()).code];
await kit.close();

await store.close();
console.log(JSON.stringify(result));
`,
  );
  const out = run(process.execPath, ["app.mjs"], CONSUMER, 30_000);
  const result = JSON.parse(out.trim().split("\n").pop() ?? "{}");
  assert.is(result.resolved, "node_modules/petstore-lib/dist/lib/index.js");
  assert.equal(result.core, { id: 1, name: "Rex", categoryId: 1, status: "available" });
  assert.equal(
    result.kit,
    [true, true, true, true],
    "petstore-lib/adapter and /client from dist/, the root's names the same",
  );
  assert.is(result.notFound, true);
  assert.equal(result.created, [201, { id: 2, name: "Tom", categoryId: 2, status: "available" }]);
  assert.is(result.list[0], 200);
  assert.is(result.list[1].length, 2);
  assert.is(result.host, "host");
  assert.equal(result.openapi, [200, "1.0.0"]);
  assert.equal(
    result.docs,
    [200, "text/html; charset=utf-8", true],
    "petstore-server's docs page, swagger-ui-dist included",
  );
  assert.is(result.deprecatedDocs, true, "petstore-lib/docs re-exports petstore-server/docs while it is installed");
  assert.equal(result.hapi, [200, "Rex", "@1795564800"]);
  assert.equal(result.testing, [true, 503, 2, 422, "unknown_category"], "petstore-lib/testing and rules from dist/");
});

test("package: a strict TypeScript consumer type-checks against the shipped .d.ts files", () => {
  writeFileSync(
    join(CONSUMER, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        skipLibCheck: false, // the shipped declarations themselves must be sound
        types: ["node"],
      },
      files: ["consumer.ts", "joi-shim.d.ts"],
    }),
  );
  // @hapi/hapi's own declarations import types from "joi", which hapi lists only as a
  // devDependency: loose stand-ins for them, so that only our declarations are judged.
  const joiTypes = ["Root", "ObjectSchema", "ValidationOptions", "SchemaMap", "Schema"];
  writeFileSync(
    join(CONSUMER, "joi-shim.d.ts"),
    `declare module "joi" {\n${joiTypes.map((t) => `  export type ${t}<T = any> = any;\n`).join("")}}\n`,
  );
  writeFileSync(
    join(CONSUMER, "consumer.ts"),
    `import { createServer } from "node:http";
import Hapi from "@hapi/hapi";
import type { ErrorCode, PetPage, PetStore, PetStoreResponse } from "petstore-lib";
import type { Pet } from "petstore-lib/schemas";
import type { PetStorage } from "petstore-lib/storage";
import { createPetStore, isPetStoreError, openStorage, PetStoreError } from "petstore-lib";
import { apiKeys } from "petstore-lib/auth";
import { memoryStorage, redisStorage } from "petstore-lib/storage";
import { petStorePlugin } from "petstore-lib/hapi";
import { createNodeHandler } from "petstore-lib/node-http";
import type { RunningServer, ServerConfig } from "petstore-server";
import { loadConfig, startServer } from "petstore-server";
import { startServer as deprecatedStart } from "petstore-lib/server";
import type { TestResponse, TestServer } from "petstore-lib/testing";
import { createTestStore, startTestServer } from "petstore-lib/testing";
import { RuleViolation } from "petstore-lib";

const storage: PetStorage = memoryStorage();
const store: PetStore = createPetStore({ storage, auth: apiKeys(["k"]), basePath: "/api/v1", maxBodyBytes: 1024 });
createPetStore({ auth: async (token: string) => token === "k" });
const pet: Pet = await store.createPet({ name: "Rex", categoryId: 1 });
const id: number = pet.id;
const page: PetPage = await store.listPets({ status: "sold", limit: 10, cursor: undefined });
const next: string | undefined = page.nextCursor;
const res: PetStoreResponse = await store.handle({ method: "GET", path: "/api/v1/pets", headers: {} });
const status: number = res.status;
try {
  await store.getPet("7");
} catch (error) {
  if (isPetStoreError(error, "pet_not_found")) {
    const code: ErrorCode = error.code;
    console.log(code, error.status, error instanceof PetStoreError);
  }
}
createServer(createNodeHandler(store, { fallback: (_req, res) => res.end() }));
const hapi = Hapi.server();
await hapi.register({ plugin: petStorePlugin, options: { store } });
const redis: Promise<PetStorage> = redisStorage({ url: "redis://127.0.0.1:6379", namespace: "shop" });
const opened: Promise<PetStorage> = openStorage("memory");
const config: ServerConfig = { port: 0, host: "127.0.0.1", storage: "memory", basePath: "/v1", logLevel: "info", apiKeys: ["k"] };
const running: Promise<RunningServer> = startServer(config);
const loaded: ServerConfig = loadConfig({ PORT: "0" }, ["--log-level", "warn"]).config;
const same: typeof startServer = deprecatedStart;
void [id, next, status, redis, opened, running, loaded, same];
const kit: TestServer = await startTestServer({ pets: 1, rules: { beforeCreate: () => { throw new RuleViolation("not_today", "No.", { status: 409 }); } } });
const inject: TestResponse = await (await createTestStore()).request("GET", "/v1/pets", { headers: { "x-request-id": "a" } });
kit.failNext(1, { status: 503, operation: "getPet" });
void inject;

// The types are precise, not any: each of these lines must be refused.
// @ts-expect-error a pet's status is one of three strings
const lost: Pet["status"] = "lost";
// @ts-expect-error auth is required
createPetStore({});
// @ts-expect-error error codes come from the contract's table
const code: ErrorCode = "teapot";
// @ts-expect-error the Node adapter needs a store
createNodeHandler({});
// @ts-expect-error fallback is a (req, res) function
createNodeHandler(store, { fallback: "/" });
// @ts-expect-error a failure is 503 or 500
kit.failNext(1, { status: 404 });
// @ts-expect-error a rule's status is 400, 403, 409 or 422
new RuleViolation("abc", "m", { status: 500 });
void [lost, code];
`,
  );
  run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], CONSUMER, 90_000);
});

test("package: petstore-server's bin starts a server on PORT=0, answers an authorised request, serves /docs, and exits 0 on SIGTERM", async () => {
  assert.ok(binName, "server/package.json has a bin");
  const bin = join(CONSUMER, "node_modules", ".bin", binName as string);
  assert.ok(existsSync(bin), `${bin} is installed`);
  const child = spawn(bin, [], {
    cwd: CONSUMER,
    env: { PATH: process.env.PATH ?? "", PORT: "0", PETSTORE_API_KEYS: KEY },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (s: string) => {
    out += s;
  });
  child.stderr.setEncoding("utf8").on("data", (s: string) => {
    err += s;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const bounded = <T>(promise: Promise<T>, what: string) =>
    Promise.race([
      promise,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`${what} within 15 s\n${out}\n${err}`)), 15_000).unref(),
      ),
    ]);
  try {
    const url = await bounded(
      new Promise<string>((resolve, reject) => {
        const check = () => {
          const found = /listening on (http:\/\/\S+)/.exec(out)?.[1];
          if (found !== undefined) resolve(found);
        };
        child.stdout.on("data", check);
        void exited.then((code) => reject(new Error(`exited with ${code}: ${out}\n${err}`)));
      }),
      "no start-up line",
    );
    assert.match(url, /^http:\/\/127\.0\.0\.1:[1-9]\d*\/v1$/);
    const res = await fetch(`${url}/pets`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.is(res.status, 200);
    assert.is(await res.text(), "[]");
    // swagger-ui-dist is petstore-server's dependency: the page is on, nothing to install.
    assert.not.match(out, /npm install/);
    const docs = await fetch(new URL("/docs", url));
    assert.is(docs.status, 200);
    assert.match(await docs.text(), /swagger/i);
    child.kill("SIGTERM");
    assert.is(await bounded(exited, "no exit after SIGTERM"), 0);
    assert.is(err, "");
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  }
});

test("package: with the library alone, petstore-lib/server and /docs fail with one line naming petstore-server, a driver with one naming it", () => {
  const alone = join(TMP, "library-alone");
  mkdirSync(alone);
  writeFileSync(join(alone, "package.json"), JSON.stringify({ name: "alone", private: true, type: "module" }));
  installInto(alone, [tarball], 120_000);
  writeFileSync(
    join(alone, "app.mjs"),
    `const out = [];
for (const entry of ["petstore-lib/server", "petstore-lib/docs"]) {
  try { await import(entry); out.push("imported"); } catch (error) { out.push(error.message); }
}
const { createPetStore, openStorage } = await import("petstore-lib");
out.push(typeof createPetStore);
// The storage drivers are the library's optional peers, not installed here: one clear error.
try { await openStorage("redis://127.0.0.1:6379"); } catch (error) { out.push(error.name + ": " + error.message); }
console.log(JSON.stringify(out));
`,
  );
  const out = JSON.parse(run(process.execPath, ["app.mjs"], alone, 30_000).trim());
  assert.equal(out, [
    'petstore-lib/server moved to the package petstore-server in 1.4: npm install petstore-server, and import from "petstore-server"',
    'petstore-lib/docs moved to the package petstore-server in 1.4: npm install petstore-server, and import from "petstore-server/docs"',
    "function",
    out[3],
  ]);
  assert.match(out[3], /^StorageConfigError: .*@keyv\/redis.*npm install @keyv\/redis/);
});

test.run();
