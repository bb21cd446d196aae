/**
 * The parts of the OpenAPI document shared by its operations: the schemas (from the valibot
 * schemas that validate requests), the response headers, and the error answers narrowed to the
 * codes each operation can give (from the error table). No schema is written twice.
 */
import {
  ALLOWED_HEADERS as CORS_ALLOWED_HEADERS,
  EXPOSED_HEADERS as CORS_EXPOSED_HEADERS,
  RATE_LIMIT_EXPOSED,
} from "./cors.ts";
import type { AnyErrorCode, ErrorCode } from "./errors.ts";
import { ERRORS } from "./errors.ts";
import { REQUEST_ID_PATTERN } from "./request-id.ts";
import type { RuleCodeDeclaration } from "./rules.ts";
import { SCHEMA_COMPONENTS } from "./schema-components.ts";

/** A JSON value of the document (kept loose on purpose: the document is data, checked by tests and lint). */
// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is free-form JSON
export type Json = any;

/** A rule code the application declares, as the document lists it. */
export type RuleCode = RuleCodeDeclaration;

export const JSON_MEDIA = "application/json";
export const SCHEMAS = "#/components/schemas/";
export const HEADERS = "#/components/headers/";

export const ref = (path: string): Json => ({ $ref: path });

/**
 * The schemas' JSON Schema 2020-12 (the dialect of OpenAPI 3.1), with refs into components: what
 * @valibot/to-json-schema makes of the valibot schemas, computed when the document is generated
 * (`npm run openapi`, scripts/json-schemas.ts) rather than at run time, which keeps the converter out
 * of the installed package. test/openapi/document.test.ts checks that they are the same. A copy
 * each call: the caller may change it.
 */
export function schemaComponents(): { schemas: Record<string, Json>; query: Json } {
  return structuredClone(SCHEMA_COMPONENTS) as { schemas: Record<string, Json>; query: Json };
}

function header(description: string, schema: Json, required = true): Json {
  return { description, required, schema };
}

const requestIdPattern = REQUEST_ID_PATTERN.source;

export function headerComponents(deprecatedAt: Date, sunsetAt: Date): Record<string, Json> {
  const seconds = Math.floor(deprecatedAt.getTime() / 1000);
  return {
    "X-Request-Id": header(
      "The client's `X-Request-Id` when it is 1 to 128 characters of `[A-Za-z0-9._-]`, otherwise a new random id.",
      { type: "string", pattern: requestIdPattern },
    ),
    "Cache-Control": header("Errors are never kept (`no-transform` added when the store forbids transforming).", {
      type: "string",
      pattern: "^no-store(, no-transform)?$",
    }),
    "Cache-Control-Kept": header(
      "An answer to a caller: `private, no-cache` by default (a browser keeps it and revalidates it with `If-None-Match`, a `304` when unchanged; no shared cache keeps it); `private, max-age=N` when the store lets pets or full pages be reused for N seconds (never the last page); `no-store` when it keeps nothing; `no-transform` added when it forbids transforming.",
      { type: "string", pattern: "^(private, (no-cache|max-age=[0-9]+)|no-store)(, no-transform)?$" },
    ),
    ETag: header(
      'A strong validator of this answer, derived from the stored data (the same from every server process and backend); send it back in `If-None-Match`. A server that compresses gives each coding its own (`"…-br"`); a host or proxy that compresses may weaken it instead (`W/`), which `If-None-Match` still matches.',
      { type: "string", pattern: '^(W/)?"[!#-~]+"$', examples: ['"3f2a9c0d51e7b864"'] },
    ),
    "Vary-Encoding": header(
      "`Accept-Encoding`: whoever compresses a pet or a page (the server, its host, a proxy), a cache keeps each coding apart. `Origin, Accept-Encoding` for an allowed page's request (CORS).",
      { type: "string", pattern: "[Aa]ccept-[Ee]ncoding", examples: ["Accept-Encoding"] },
    ),
    "Content-Encoding": header(
      "`zstd`, `br` or `gzip` when the server compressed the answer for a client that accepts it (answers of 1 KiB or more).",
      { type: "string", enum: ["zstd", "br", "gzip"] },
      false,
    ),
    "X-Content-Type-Options": header("No answer is sniffed for another type than it declares.", {
      type: "string",
      const: "nosniff",
    }),
    "Retry-After": header("Seconds to wait before retrying.", { type: "integer", minimum: 0, examples: [1] }),
    "RateLimit-Policy": header(
      'When the server has rate limits (IETF draft-ietf-httpapi-ratelimit-headers): `"default";q=<requests>;w=<seconds>`, the requests each key may make in each window.',
      { type: "string", pattern: '^"default";q=[0-9]+;w=[0-9]+$', examples: ['"default";q=600;w=60'] },
      false,
    ),
    RateLimit: header(
      'When the server has rate limits: `"default";r=<requests left>;t=<seconds to the window\'s end>` for this key.',
      { type: "string", pattern: '^"default";r=[0-9]+;t=[0-9]+$', examples: ['"default";r=599;t=42'] },
      false,
    ),
    "WWW-Authenticate": header(
      '`Bearer realm="petstore"` when the key is missing; with `, error="invalid_token"` when it is wrong or unknown.',
      { type: "string", pattern: '^Bearer realm="petstore"(, error="invalid_token")?$' },
    ),
    "WWW-Authenticate-Invalid-Request": header(
      'With `invalid_request` (`Authorization` given more than once, RFC 6750): `Bearer realm="petstore", error="invalid_request"`. Absent with the other codes.',
      { type: "string", const: 'Bearer realm="petstore", error="invalid_request"' },
      false,
    ),
    Location: header("Path of the created pet: `{base}/pets/{id}`.", {
      type: "string",
      pattern: "/pets/[1-9][0-9]*$",
    }),
    "Link-Next": header(
      'Present when more pets follow (RFC 8288): `<{base}/pets?limit=N[&status=S]&cursor=C>; rel="next"`, path-absolute. Absent on the last page.',
      { type: "string", pattern: '^<[^>]+>; rel="next"$' },
      false,
    ),
    Deprecation: header("RFC 9745: when this operation was deprecated, as `@<unix seconds>`.", {
      type: "string",
      pattern: "^@[0-9]+$",
      examples: [`@${seconds}`],
    }),
    Sunset: header("RFC 8594: when this operation goes away (an HTTP-date).", {
      type: "string",
      pattern: "^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$",
      examples: [sunsetAt.toUTCString()],
    }),
    "Link-Successor": header('The replacement of this operation: `<{base}/pets>; rel="successor-version"`.', {
      type: "string",
      pattern: '^<[^>]+/pets>; rel="successor-version"$',
    }),
    Allow: header("The methods this path accepts.", { type: "string", examples: ["GET, HEAD, POST"] }),
    "Access-Control-Allow-Origin": header("The page's origin (or `*` when any origin is allowed).", {
      type: "string",
    }),
    "Access-Control-Allow-Methods": header("The methods this path accepts.", {
      type: "string",
      examples: ["GET, HEAD, POST"],
    }),
    "Access-Control-Allow-Headers": header("The request headers a page may send.", {
      type: "string",
      const: CORS_ALLOWED_HEADERS,
    }),
    "Access-Control-Max-Age": header("Seconds the browser may keep this answer.", {
      type: "string",
      pattern: "^[0-9]+$",
    }),
    "Access-Control-Expose-Headers": header(
      "The headers of the contract a page's script may read (with rate limits, `RateLimit` and `RateLimit-Policy` too).",
      { type: "string", enum: [CORS_EXPOSED_HEADERS, `${CORS_EXPOSED_HEADERS}, ${RATE_LIMIT_EXPOSED}`] },
    ),
    Vary: header("The answer depends on the request's `Origin`.", { type: "string", pattern: "Origin" }),
    "Idempotent-Replayed": header(
      "`true` when this answer replays the first answer to the same `Idempotency-Key` (nothing new was stored); absent otherwise.",
      { type: "string", const: "true" },
      false,
    ),
  };
}

/** Headers on every answer of an operation, plus `extra` (name → component name). */
export function headers(extra: Record<string, string> = {}): Json {
  const out: Json = {
    "X-Request-Id": ref(`${HEADERS}X-Request-Id`),
    "Cache-Control": ref(`${HEADERS}Cache-Control`),
    "X-Content-Type-Options": ref(`${HEADERS}X-Content-Type-Options`),
  };
  for (const [name, component] of Object.entries(extra)) out[name] = ref(`${HEADERS}${component}`);
  return out;
}

/**
 * createPet's error answers: the table's, with the application's rule codes added under their
 * statuses (a rule's 400 beside `invalid_body`, a 403, 409 or 422 of its own).
 */
export function createPetErrors(ruleCodes: readonly RuleCode[]): Json {
  const byStatus = new Map<number, AnyErrorCode[]>([
    [400, ["invalid_request", "invalid_body", "malformed_json", "invalid_idempotency_key"]],
    [409, ["idempotency_key_in_use"]],
    [422, ["idempotency_key_reused"]],
  ]);
  for (const { code, status } of ruleCodes) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  const out: Json = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = errorResponse(codes, {}, ruleCodes);
    if (status === 400) {
      out["413"] = errorResponse(["payload_too_large"]);
      out["415"] = errorResponse(["unsupported_media_type"]);
    }
  }
  return out;
}

export const DEPRECATION_HEADERS = { Deprecation: "Deprecation", Sunset: "Sunset", Link: "Link-Successor" };

/** The `If-None-Match` request header of listPets and getPet. */
export const IF_NONE_MATCH: Json = {
  name: "If-None-Match",
  in: "header",
  required: false,
  description:
    "The `ETag`s of answers the client holds (a list, or `*`; weak comparison, so a proxy's `W/` does not matter): when one names this answer, it is `304 Not Modified` without a body.",
  schema: { type: "string", examples: ['"3f2a9c0d51e7b864"'] },
};

/** The headers of a pet or a page: its validator, what caches may do with it, and its coding. */
export const VALIDATED_HEADERS = {
  ETag: "ETag",
  "Cache-Control": "Cache-Control-Kept",
  Vary: "Vary-Encoding",
  "Content-Encoding": "Content-Encoding",
};

/** `304 Not Modified` of a pet or a page: no body, and the headers RFC 9110 §15.4.5 keeps. */
export function notModifiedResponse(extraHeaders: Record<string, string> = {}): Json {
  const { "Content-Encoding": _, ...kept } = VALIDATED_HEADERS;
  return {
    description:
      "Not modified: `If-None-Match` names this answer's `ETag` (weak comparison) or is `*`. No body; the `ETag`, `Cache-Control` and `Vary` the `200` would carry.",
    headers: headers({ ...kept, ...extraHeaders }),
  };
}

/**
 * The answer for one status of the error table: the Error schema narrowed to the codes this
 * operation can produce with that status, and one example per code. Each narrowing repeats the
 * `type` beside its `enum` and `const`, and the required fields, as generators read a variant alone.
 */
export function errorResponse(
  codes: AnyErrorCode[],
  extraHeaders: Record<string, string> = {},
  rules: readonly RuleCode[] = [],
): Json {
  const messageOf = (code: AnyErrorCode): string =>
    rules.find((r) => r.code === code)?.description ?? ERRORS[code as ErrorCode].message;
  const status = rules.find((r) => r.code === codes[0])?.status ?? ERRORS[codes[0] as ErrorCode].status;
  const examples: Json = {};
  for (const code of codes) examples[code] = { value: { code, message: messageOf(code), status } };
  const byCode = codes.map((code) => `\`${code}\`: ${messageOf(code)}`).join(" ");
  const named: Record<string, string> = {};
  if (codes.includes("unauthorized")) named["WWW-Authenticate"] = "WWW-Authenticate";
  if (codes.includes("invalid_request")) named["WWW-Authenticate"] = "WWW-Authenticate-Invalid-Request";
  if (codes.includes("storage_unavailable") || codes.includes("idempotency_key_in_use")) {
    named["Retry-After"] = "Retry-After";
  }
  return {
    description: byCode,
    headers: headers({ ...named, ...extraHeaders }),
    content: {
      [JSON_MEDIA]: {
        schema: {
          allOf: [
            ref(`${SCHEMAS}Error`),
            {
              type: "object",
              required: ["code", "message", "status"],
              properties: { code: { type: "string", enum: codes }, status: { type: "integer", const: status } },
            },
          ],
        },
        examples,
      },
    },
  };
}

/** The rate limits' headers, on every answer of an operation once the key is accepted. */
export const RATE_LIMIT_HEADERS = { "RateLimit-Policy": "RateLimit-Policy", RateLimit: "RateLimit" };

/** `429 rate_limited`: a key past its rate limit, told when to come back. */
export function rateLimitedResponse(extraHeaders: Record<string, string> = {}): Json {
  return errorResponse(["rate_limited"], { ...extraHeaders, ...RATE_LIMIT_HEADERS, "Retry-After": "Retry-After" });
}

/**
 * The answers every operation can give whatever its input: 401, 403, 500 and 503. A 500 documents
 * no extra header: the last-resort answer to an unexpected failure carries only the common ones.
 */
export function commonErrors(extraHeaders: Record<string, string> = {}): Json {
  return {
    "401": errorResponse(["unauthorized"], extraHeaders),
    "403": errorResponse(["insufficient_scope"], extraHeaders),
    "500": errorResponse(["internal_error"]),
    "503": errorResponse(["storage_unavailable"], extraHeaders),
  };
}
