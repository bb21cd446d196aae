/**
 * The library's public surface per entry: the root keeps the domain (at most 40 names besides its
 * deprecated aliases); backends and the storage port live in petstore-lib/storage, valibot
 * schemas in petstore-lib/schemas, auth, observations and the OpenAPI builder in entries of their
 * own. Each name that left the root stays there until 2.0 as a deprecated alias: the same binding
 * (one class, one schema), marked so an editor names its new home.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { test } from "uvu";
import * as assert from "uvu/assert";
import * as adapterEntry from "../../lib/adapter.ts";
import * as authEntry from "../../lib/entries/auth.ts";
import * as observeEntry from "../../lib/entries/observe.ts";
import * as openapiEntry from "../../lib/entries/openapi.ts";
import * as schemasEntry from "../../lib/entries/schemas.ts";
import * as storageEntry from "../../lib/entries/storage.ts";
import * as root from "../../lib/index.ts";
import * as cursorHome from "../../lib/next-cursor.ts";

const ROOT_FILE = fileURLToPath(new URL("../../lib/index.ts", import.meta.url));
const PACKAGE = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  exports: Record<string, { types: string; default: string }>;
};

/** Each new entry's module, by the subpath a user imports. */
const ENTRIES: Record<string, Record<string, unknown>> = {
  "petstore-lib/adapter": adapterEntry,
  "petstore-lib/auth": authEntry,
  "petstore-lib/client": cursorHome,
  "petstore-lib/observe": observeEntry,
  "petstore-lib/openapi": openapiEntry,
  "petstore-lib/schemas": schemasEntry,
  "petstore-lib/storage": storageEntry,
};

interface RootName {
  name: string;
  /** Where its @deprecated tag sends the user, or undefined for a name at home in the root. */
  movedTo: string | undefined;
  /** Whether it has a value at run time (a type leaves no trace). */
  isValue: boolean;
}

/** The root's exports as the compiler sees them, each with the @deprecated tag of its export. */
function rootNames(): RootName[] {
  const program = ts.createProgram([ROOT_FILE], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    types: ["node"],
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(ROOT_FILE);
  if (source === undefined) throw new Error(`cannot read ${ROOT_FILE}`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  if (moduleSymbol === undefined) throw new Error("lib/index.ts is not a module");
  return checker.getExportsOfModule(moduleSymbol).map((symbol) => {
    // The tag sits on the export specifier, or on the declaration for `export const x = …`.
    const declaration = symbol.declarations?.[0];
    const tag = declaration === undefined ? undefined : ts.getJSDocDeprecatedTag(declaration);
    const comment = typeof tag?.comment === "string" ? tag.comment : ts.getTextOfJSDocComment(tag?.comment);
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return {
      name: symbol.name,
      movedTo: tag === undefined ? undefined : (/Import from "([^"]+)"/.exec(comment ?? "")?.[1] ?? "?"),
      isValue: (target.flags & ts.SymbolFlags.Value) !== 0,
    };
  });
}

const names = rootNames();

test("root: petstore-lib exports at most 40 names besides its deprecated aliases", () => {
  const kept = names.filter((n) => n.movedTo === undefined).map((n) => n.name);
  assert.ok(kept.length <= 40, `${kept.length} names: ${kept.sort().join(", ")}`);
  for (const name of ["createPetStore", "openStorage", "PetStoreError", "ERRORS", "PetStore", "Operations"]) {
    assert.ok(kept.includes(name), `the root keeps ${name}`);
  }
});

test("root: no backend, storage port type, valibot schema or auth factory is at home in the root", () => {
  const moved = new Map(names.map((n) => [n.name, n.movedTo]));
  const expected: Record<string, string[]> = {
    "petstore-lib/storage": [
      "memoryStorage",
      "sqliteStorage",
      "redisStorage",
      "postgresStorage",
      "PetStorage",
      "ListPage",
    ],
    "petstore-lib/schemas": ["Pet", "NewPet", "Pets", "PetStatus", "ListQuery", "ErrorSchema", "PET_STATUSES"],
    "petstore-lib/auth": ["apiKeys", "jwt", "Principal", "VerifyToken"],
    "petstore-lib/observe": ["Observation", "Observer"],
    "petstore-lib/openapi": ["buildOpenApi"],
  };
  for (const [entry, list] of Object.entries(expected)) {
    for (const name of list) assert.is(moved.get(name), entry, `${name} moved to ${entry}`);
  }
});

test("root: each deprecated alias names an entry that exports it, and is the same value there", () => {
  const deprecated = names.filter((n) => n.movedTo !== undefined);
  assert.ok(deprecated.length > 40, "the names moved in 1.4 are all still there");
  for (const { name, movedTo, isValue } of deprecated) {
    const entry = ENTRIES[movedTo as string];
    assert.ok(entry !== undefined, `${name}: "${movedTo}" is an entry this test knows`);
    if (!isValue) continue;
    assert.ok(name in entry, `${movedTo} exports ${name}`);
    assert.ok(Object.is((root as Record<string, unknown>)[name], entry[name]), `${name} is one binding`);
  }
  // One class on both paths: instanceof holds whichever path the caller imported.
  assert.ok(new storageEntry.StorageWarning("memory", "x") instanceof root.StorageWarning);
});

test("entries: every new entry is in package.json exports, built to dist/lib/entries", () => {
  for (const entry of ["storage", "schemas", "auth", "observe", "openapi"]) {
    assert.equal(PACKAGE.exports[`./${entry}`], {
      types: `./dist/lib/entries/${entry}.d.ts`,
      default: `./dist/lib/entries/${entry}.js`,
    });
  }
});

test("entries: a store built from the new entries alone serves the contract", async () => {
  const store = root.createPetStore({
    auth: authEntry.apiKeys(["k"]),
    storage: storageEntry.memoryStorage(),
  });
  const created = await store.createPet({ name: "Rex", categoryId: 1 });
  const pets = await store.listPets({});
  assert.ok(schemasEntry.Pets !== undefined);
  assert.equal(pets.pets, [created]);
  assert.is(openapiEntry.buildOpenApi().openapi, "3.1.0");
  await store.close?.();
});

test.run();
