/**
 * The TypeScript versions the README names: a usage file of the packed library's entry points
 * type-checks without `skipLibCheck` under TypeScript 5.1 (the floor), the repository's 5.x and the
 * newest; under 5.0 only the dependencies' declarations fail (valibot's and Node's, never ours).
 * The compilers are installed into the project from the npm cache (the registry on a first run).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanUp, consumer, ROOT, run, versionOf } from "../support/packed.ts";

/** The floor, the repository's own version and the newest; 5.0 is the version below the floor. */
const FLOOR = "5.1.6";
const NEWEST = "7.0.2";
const BELOW = "5.0.4";

/** What a Node.js program written in TypeScript imports and calls, entry point by entry point. */
const USAGE = `import http from "node:http";
import type { ErrorCode, NewPetInput, Operations, PetStoreOptions } from "petstore-lib";
import { createPetStore, isPetStoreError, PetStoreError, RuleViolation } from "petstore-lib";
import { buildOpenApi } from "petstore-lib/openapi";
import { nextCursor } from "petstore-lib"; // a deprecated alias: it must type-check too
import { type AdapterStore, isPromise, isUnderBasePath } from "petstore-lib/adapter";
import { createPetStoreClient, nextCursor as nextCursorOfClient } from "petstore-lib/client";
import { conformanceCases } from "petstore-lib/conformance";
import { createFetchHandler } from "petstore-lib/fetch";
import { createNodeHandler } from "petstore-lib/node-http";
import { apiKeys } from "petstore-lib/auth";
import type { Observation } from "petstore-lib/observe";
import type { Pet } from "petstore-lib/schemas";
import { memoryStorage } from "petstore-lib/storage";
import { createTestStore, startTestServer } from "petstore-lib/testing";

const seen: Observation[] = [];
const options: PetStoreOptions = {
  auth: apiKeys(["key"]),
  storage: memoryStorage(),
  observe: (observation) => void seen.push(observation),
  rules: { beforeCreate: (pet) => void pet.name },
};
const store = createPetStore(options);
const operations: Operations = store;
const input: NewPetInput = { name: "Rex", categoryId: 1, status: "sold" };
const pet: Pet = await operations.createPet(input);
const id: number = pet.id;
const page = await store.listPets({ limit: 10 });
const fetchHandler = createFetchHandler(store);
const answer: Response = await fetchHandler(new Request("http://localhost/v1/pets"));
const cursor: string | undefined = nextCursor(answer);
const adapterStore: AdapterStore = store;
const answered = adapterStore.respond({ method: "GET", path: "/v1/pets", headers: {} });
const routed: boolean = isUnderBasePath("/v1/pets", adapterStore.basePath);
const client = createPetStoreClient({ baseUrl: "http://localhost/v1", key: "key" });
console.log(routed, (isPromise(answered) ? await answered : answered).status, nextCursorOfClient(answer), client);
try {
  await store.getPet(id + 1);
} catch (error) {
  if (isPetStoreError(error)) {
    const code: ErrorCode = error.code as ErrorCode;
    const status: number = error.status;
    console.log(code, status);
  }
}
http.createServer(createNodeHandler(store));
const kit = await createTestStore({ pets: 3 });
const listed = await kit.request("GET", "/v1/pets?limit=2");
const server = await startTestServer();
console.log(page, cursor, listed.status, server.url, conformanceCases().length, buildOpenApi().openapi, seen);
console.log(new PetStoreError("pet_not_found"), new RuleViolation("name_taken", "Taken."));
// @ts-expect-error: categoryId is a number
const wrong: NewPetInput = { name: "Rex", categoryId: "1" };
console.log(wrong);
`;

/** A Node.js project's settings: ES modules resolved by package exports, strict, every declaration checked. */
const TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    lib: ["ES2022"],
    types: ["node"],
    strict: true,
    skipLibCheck: false,
    noEmit: true,
  },
  include: ["usage.ts"],
});

let dir = "";
test.before(() => {
  dir = consumer([
    `@types/node@${versionOf("@types/node")}`,
    `typescript-floor@npm:typescript@${FLOOR}`,
    `typescript-newest@npm:typescript@${NEWEST}`,
    `typescript-below@npm:typescript@${BELOW}`,
  ]);
  writeFileSync(join(dir, "usage.ts"), USAGE);
  writeFileSync(join(dir, "tsconfig.json"), TSCONFIG);
});
test.after(cleanUp);

/** Runs one compiler's tsc on the project; resolves its exit code and output. */
function typeCheck(tsc: string): { ok: boolean; output: string } {
  try {
    return { ok: true, output: run(process.execPath, [tsc, "-p", "tsconfig.json"], dir, 180_000) };
  } catch (error) {
    return { ok: false, output: String((error as Error).message) };
  }
}

const compilers = [
  { version: FLOOR, tsc: () => join(dir, "node_modules/typescript-floor/bin/tsc") },
  { version: versionOf("typescript"), tsc: () => join(ROOT, "node_modules/typescript/bin/tsc") },
  { version: NEWEST, tsc: () => join(dir, "node_modules/typescript-newest/bin/tsc") },
];
for (const { version, tsc } of compilers) {
  test(`TypeScript ${version} type-checks a usage of every Node entry point against the packed declarations (strict, no skipLibCheck)`, () => {
    const { ok, output } = typeCheck(tsc());
    assert.ok(ok, output.slice(0, 4000));
    assert.match(run(process.execPath, [tsc(), "--version"], dir), version);
  });
}

test(`TypeScript ${BELOW} fails only in dependencies' declarations (valibot's), never in petstore-lib's: the floor is ${FLOOR}`, () => {
  const { ok, output } = typeCheck(join(dir, "node_modules/typescript-below/bin/tsc"));
  assert.not.ok(ok, "5.0 passes: lower the floor in the README and here");
  const files = [...output.matchAll(/^([^\s(]+)\(\d+,\d+\): error TS\d+/gm)].map((m) => m[1] ?? "");
  assert.ok(
    files.some((f) => f.startsWith("node_modules/valibot/")),
    output.slice(0, 2000),
  );
  assert.equal(
    files.filter((f) => !/^node_modules\/(valibot|@types\/node)\//.test(f)),
    [],
    "errors outside valibot's and Node's declarations",
  );
});

test("README: states the floor and the versions CI checks", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8").replace(/\s+/g, " ");
  const minor = (v: string) => v.split(".").slice(0, 2).join(".");
  assert.ok(readme.includes(`TypeScript ${minor(FLOOR)} or later`), "the floor");
  const checked = `with ${compilers
    .map((c) => minor(c.version))
    .join(", ")
    .replace(/, ([^,]*)$/, " and $1")}, without \`skipLibCheck\``;
  assert.ok(readme.includes(checked), checked);
});

test.run();
