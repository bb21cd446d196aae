/**
 * The files of the generated-clients project (test/package/generated-clients.test.ts): the
 * generators' settings, and for each client a type check of every documented error answer and a
 * program that walks every page with `nextCursor` and reads real error answers.
 */

// biome-ignore lint/suspicious/noExplicitAny: the document is free-form JSON
type Json = any;

/** One error answer of one operation, as the document lists it. */
export interface ErrorAnswer {
  operation: string;
  status: number;
  codes: string[];
}

/** Every error answer of the document's operations (what the type checks cover). */
export function errorAnswers(doc: Json): ErrorAnswer[] {
  const answers: ErrorAnswer[] = [];
  for (const item of Object.values<Json>(doc.paths)) {
    for (const operation of Object.values<Json>(item)) {
      if (operation.operationId.startsWith("preflight")) continue;
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        const codes = response.content?.["application/json"]?.schema?.allOf?.[1]?.properties?.code?.enum;
        if (Number(status) >= 400 && codes !== undefined)
          answers.push({ operation: operation.operationId, status: Number(status), codes });
      }
    }
  }
  return answers;
}

/** orval's settings: its fetch client, with a mutator that adds the base URL (the usual way). */
export const orvalConfig = (major: number) => `export default {
  petstore: {
    input: { target: "./node_modules/petstore-lib/openapi.json" },
    output: {
      target: "./src/orval${major}/petstore.ts",
      client: "fetch",
      override: { mutator: { path: "./src/orval-fetch.ts", name: "petstoreFetch" } },
    },
  },
};
`;

export const ORVAL_FETCH = `/** orval's mutator: the base URL (base path included) before each generated path. */
export const petstoreFetch = async <T>(url: string, init: RequestInit): Promise<T> => {
  const response = await fetch(\`\${process.env.PETSTORE_URL}\${url}\`, init);
  const text = await response.text();
  return { data: text === "" ? undefined : JSON.parse(text), status: response.status, headers: response.headers } as T;
};
`;

const capitalised = (name: string) => `${name[0]?.toUpperCase()}${name.slice(1)}`;

/**
 * Type checks of every error answer: a documented body is accepted, its `code` and `status` read
 * as the documented literals, another status refused. An error type reduced to `never` fails the
 * first; a `status` typed `number` (or `"404"`) fails the last two.
 */
function errorChecks(answers: ErrorAnswer[], typeOf: (a: ErrorAnswer) => string): string {
  return answers
    .map((a) => {
      const name = `${a.operation}${a.status}`;
      const codes = a.codes.map((c) => JSON.stringify(c)).join(" | ");
      const other = a.status === 500 ? 503 : 500;
      return [
        `export const ${name}: ${typeOf(a)}[] = [${a.codes.map((c) => `{ code: "${c}", message: "m", status: ${a.status} }`).join(", ")}];`,
        `export const read${capitalised(name)} = (e: ${typeOf(a)}): [${codes}, ${a.status}] => [e.code, e.status];`,
        `// @ts-expect-error: the status is the documented one`,
        `export const wrong${capitalised(name)}: ${typeOf(a)} = { code: "${a.codes[0]}", message: "m", status: ${other} };`,
      ].join("\n");
    })
    .join("\n");
}

export const orvalErrors = (major: number, answers: ErrorAnswer[]) =>
  `import type { ${answers.map((a) => `${a.operation}Response${a.status}`).join(", ")} } from "./orval${major}/petstore";\n` +
  errorChecks(answers, (a) => `${a.operation}Response${a.status}["data"]`);

export const heyApiErrors = (answers: ErrorAnswer[]) =>
  `import type { ${[...new Set(answers.map((a) => `${capitalised(a.operation)}Errors`))].join(", ")} } from "./hey-api";\n` +
  errorChecks(answers, (a) => `${capitalised(a.operation)}Errors[${a.status}]`);

/** What each program prints: the ids met walking the pages, and the errors read from real answers. */
export interface Walk {
  ids: number[];
  pages: number;
  errors: [number, string, number][];
  created: number;
}

const START = `import { nextCursor } from "petstore-lib";
import { startTestServer } from "petstore-lib/testing";

const server = await startTestServer({ pets: 45 });
const errors: [number, string, number][] = [];
const ids: number[] = [];
let cursor: string | undefined;
let pages = 0;
try {
`;
const END = `  console.log(JSON.stringify({ ids, pages, errors, created }));
} finally {
  await server.close();
}
`;

/** The program of an orval client: answers are \`{ data, status, headers }\`, narrowed by status. */
export const orvalProgram = (major: number) => `${START.replace(
  "\n\n",
  `\nimport { createPet, getPet, listPets } from "./orval${major}/petstore";\n\n`,
)}  process.env.PETSTORE_URL = server.url;
  const auth = { headers: { authorization: \`Bearer \${server.key}\` } };
  do {
    const page = await listPets({ limit: 10, ...(cursor === undefined ? {} : { cursor }) }, auth);
    if (page.status !== 200) throw new Error(\`listPets answered \${page.status}\`);
    ids.push(...page.data.map((pet) => pet.id));
    cursor = nextCursor(page);
    pages++;
  } while (cursor !== undefined && pages < 20);
  const missing = await getPet(999, auth);
  if (missing.status === 404) errors.push([missing.status, missing.data.code, missing.data.status]);
  const badLimit = await listPets({ limit: 0 }, auth);
  if (badLimit.status === 400) errors.push([badLimit.status, badLimit.data.code, badLimit.data.status]);
  const noKey = await createPet({ name: "Rex", categoryId: 1 });
  if (noKey.status === 401) errors.push([noKey.status, noKey.data.code, noKey.data.status]);
  const made = await createPet({ name: "Rex", categoryId: 1 }, auth);
  const created = made.status === 201 ? made.data.id : -made.status;
${END}`;

/** The program of the hey-api client: answers are \`{ data, error, response }\` (pages: \`throwOnError\`, so \`response\` is always there). */
export const heyApiProgram = `${START.replace(
  "\n\n",
  `\nimport { createClient } from "./hey-api/client";\nimport { client } from "./hey-api/client.gen";\nimport { createPet, getPet, listPets } from "./hey-api";\n\n`,
)}  client.setConfig({ baseUrl: server.url, auth: () => server.key });
  do {
    const page = await listPets({ query: { limit: 10, ...(cursor === undefined ? {} : { cursor }) }, throwOnError: true });
    ids.push(...page.data.map((pet) => pet.id));
    cursor = nextCursor(page.response);
    pages++;
  } while (cursor !== undefined && pages < 20);
  const missing = await getPet({ path: { petId: 999 } });
  if (missing.error) errors.push([missing.response?.status ?? 0, missing.error.code, missing.error.status]);
  const badLimit = await listPets({ query: { limit: 0 } });
  if (badLimit.error) errors.push([badLimit.response?.status ?? 0, badLimit.error.code, badLimit.error.status]);
  const anonymous = createClient({ baseUrl: server.url });
  const noKey = await createPet({ client: anonymous, body: { name: "Rex", categoryId: 1 } });
  if (noKey.error) errors.push([noKey.response?.status ?? 0, noKey.error.code, noKey.error.status]);
  const made = await createPet({ body: { name: "Rex", categoryId: 1 } });
  const created = made.data?.id ?? -(made.response?.status ?? 0);
${END}`;

/** The project's tsconfig: strict, lib checks on, resolution as bundlers (the generated imports have no extension). */
export const TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: "ES2022",
    module: "ESNext",
    moduleResolution: "Bundler",
    lib: ["ES2022", "DOM", "DOM.Iterable"],
    types: ["node"],
    strict: true,
    skipLibCheck: false,
    noEmit: true,
  },
  include: ["src"],
});
