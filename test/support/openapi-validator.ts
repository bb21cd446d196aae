/**
 * Checks one recorded HTTP answer against the OpenAPI document (the committed openapi.json by
 * default): the status is documented for that operation, the body matches the response schema,
 * and the documented headers are present where required and match their schemas.
 * Used by test/conformance/observe.ts on every answer of the conformance suite.
 */
import { readFileSync } from "node:fs";
import type { ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsImport from "ajv-formats";

// ajv-formats is CommonJS: under NodeNext its default import is the module object, whose
// runtime value is the plugin function itself.
const addFormats = addFormatsImport as unknown as (ajv: Ajv2020) => Ajv2020;

// biome-ignore lint/suspicious/noExplicitAny: the document is free-form JSON
type Json = any;

/** One answer as a test recorded it. Header names in any case; `body` as text (or already parsed). */
export interface ObservedExchange {
  method: string;
  /** Request path, with or without the query string. */
  path: string;
  status: number;
  headers: Readonly<Record<string, string | string[] | number | undefined>>;
  body: string | unknown;
}

export interface CheckOptions {
  /** The store's base path (default "/v1"). */
  basePath?: string;
}

/** The committed document at the repository root. */
export function committedDocument(): Json {
  return JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8"));
}

/** What the document says about a method and path: an operation, an answer outside any operation, or nothing. */
type Target =
  | { kind: "operation"; name: string; op: Json; head: boolean }
  | { kind: "component"; name: string; response: Json; head: boolean }
  | { kind: "document"; head: boolean }
  | { kind: "outside" };

/** Makes a checker for one document; compiled schemas are cached across calls. */
export function createResponseChecker(doc: Json = committedDocument()) {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  // Header values are text on the wire; their schemas describe the value (e.g. an integer).
  const headerAjv = new Ajv2020({ allErrors: true, strict: true, coerceTypes: true });
  addFormats(headerAjv);
  const defs = rewriteRefs(doc.components?.schemas ?? {});
  const cache = new Map<string, ValidateFunction>();

  function validator(key: string, schema: Json, forHeader = false): ValidateFunction {
    let fn = cache.get(key);
    if (fn === undefined) {
      fn = (forHeader ? headerAjv : ajv).compile({ ...rewriteRefs(schema), $defs: defs });
      cache.set(key, fn);
    }
    return fn;
  }

  function resolve(value: Json): Json {
    let current = value;
    for (let i = 0; i < 10 && current && typeof current.$ref === "string"; i++) {
      const pointer = (current.$ref as string).replace(/^#\//, "").split("/");
      current = pointer.reduce((node: Json, part) => node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
    }
    return current;
  }

  function target(method: string, rawPath: string, basePath: string): Target {
    const path = rawPath.split("?", 1)[0] as string;
    const m = method.toUpperCase();
    const head = m === "HEAD";
    const verb = head ? "get" : m.toLowerCase();
    if (path !== basePath && !path.startsWith(`${basePath}/`)) return { kind: "outside" };
    const rest = path.slice(basePath.length);
    if (rest === "/openapi.json") {
      if (verb === "get") return { kind: "document", head };
      return {
        kind: "component",
        name: "MethodNotAllowed",
        response: resolve(doc.components.responses.MethodNotAllowed),
        head,
      };
    }
    for (const [template, item] of Object.entries<Json>(doc.paths)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
      if (!pattern.test(rest)) continue;
      const op = item[verb];
      if (op === undefined) {
        const response = resolve(doc.components.responses.MethodNotAllowed);
        return { kind: "component", name: "MethodNotAllowed", response, head };
      }
      return { kind: "operation", name: op.operationId, op, head };
    }
    return { kind: "component", name: "NotFound", response: resolve(doc.components.responses.NotFound), head };
  }

  function checkHeaders(key: string, response: Json, headers: Map<string, string>, problems: string[]): void {
    for (const [name, raw] of Object.entries<Json>(response.headers ?? {})) {
      const spec = resolve(raw);
      const value = headers.get(name.toLowerCase());
      if (value === undefined) {
        if (spec.required) problems.push(`header ${name} is required but missing`);
        continue;
      }
      if (spec.schema === undefined) continue;
      const validate = validator(`${key} header ${name}`, spec.schema, true);
      const holder = { value };
      const ok = validator(
        `${key} header ${name} holder`,
        { type: "object", properties: { value: spec.schema } },
        true,
      );
      if (!ok(holder)) problems.push(`header ${name}: ${JSON.stringify(value)} ${ajv.errorsText(ok.errors)}`);
      void validate;
    }
  }

  function checkBody(key: string, response: Json, observed: ObservedExchange, head: boolean, problems: string[]): void {
    const text = typeof observed.body === "string" ? observed.body : undefined;
    if (head) {
      if (text !== undefined && text !== "") problems.push("a HEAD answer must have an empty body");
      return;
    }
    const media = response.content?.["application/json"];
    if (media === undefined) return;
    let body: unknown = observed.body;
    if (text !== undefined) {
      try {
        body = JSON.parse(text);
      } catch {
        problems.push(`body is not JSON: ${text.slice(0, 80)}`);
        return;
      }
    }
    const validate = validator(`${key} body`, media.schema);
    if (!validate(body)) problems.push(`body ${ajv.errorsText(validate.errors, { dataVar: "body" })}`);
  }

  /** The ways this answer breaks the document; [] when it conforms or is outside the API. */
  return function check(observed: ObservedExchange, options: CheckOptions = {}): string[] {
    const basePath = options.basePath ?? "/v1";
    const headers = new Map<string, string>();
    for (const [name, value] of Object.entries(observed.headers)) {
      if (value !== undefined) headers.set(name.toLowerCase(), Array.isArray(value) ? value.join(", ") : String(value));
    }
    const where = target(observed.method, observed.path, basePath);
    const problems: string[] = [];
    if (where.kind === "outside") return problems;
    const label = `${observed.method.toUpperCase()} ${observed.path.split("?", 1)[0]} → ${observed.status}`;
    if (where.kind === "document") {
      if (observed.status !== 200) problems.push("the OpenAPI document must be served with 200");
      return problems.map((p) => `${label}: ${p}`);
    }
    let response: Json;
    let key: string;
    if (where.kind === "operation") {
      response = resolve(where.op.responses[String(observed.status)]);
      key = `${where.name} ${observed.status}`;
      if (response === undefined) {
        return [`${label}: status ${observed.status} is not documented for ${where.name}`];
      }
    } else {
      response = where.response;
      key = where.name;
      const expected = where.name === "NotFound" ? 404 : 405;
      if (observed.status !== expected) {
        return [`${label}: expected ${expected} (${where.name}) for a request outside the operations`];
      }
    }
    if (observed.status !== 204 && !where.head) {
      const type = headers.get("content-type") ?? "";
      const mediaTypes = Object.keys(response.content ?? {});
      if (mediaTypes.length > 0 && !mediaTypes.some((m) => type.split(";", 1)[0]?.trim().toLowerCase() === m)) {
        problems.push(`content-type ${JSON.stringify(type)} is not one of ${mediaTypes.join(", ")}`);
      }
    }
    checkHeaders(key, response, headers, problems);
    checkBody(key, response, observed, where.head, problems);
    return problems.map((p) => `${label} (${key}): ${p}`);
  };
}

/** Moves `#/components/schemas/X` references to `#/$defs/X`, where the compiled schema carries them. */
function rewriteRefs(schema: Json): Json {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"#/$defs/'));
}

let shared: ReturnType<typeof createResponseChecker> | undefined;

/** Checks an answer against the committed openapi.json; throws with every problem when it breaks it. */
export function assertConforms(observed: ObservedExchange, options: CheckOptions = {}): void {
  shared ??= createResponseChecker();
  const problems = shared(observed, options);
  if (problems.length > 0) throw new Error(`answer breaks openapi.json:\n  ${problems.join("\n  ")}`);
}
