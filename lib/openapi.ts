/**
 * The OpenAPI 3.1 document of the API, answer for answer the contract's: its paths and
 * operations, built from the shared components (lib/openapi-components.ts). `buildOpenApi` for
 * tools; `openApiRoute` serves it at `{base}/openapi.json` without a key.
 */
import { EXPOSED_HEADERS, RATE_LIMIT_EXPOSED } from "./cors.ts";
import { DEFAULT_IDEMPOTENCY_TTL_MS } from "./idempotency.ts";
import type { JsonText } from "./json.ts";
import type { Json, RuleCode } from "./openapi-components.ts";
import {
  commonErrors,
  createPetErrors,
  DEPRECATION_HEADERS,
  errorResponse,
  HEADERS,
  headerComponents,
  headers,
  IF_NONE_MATCH,
  JSON_MEDIA,
  notModifiedResponse,
  RATE_LIMIT_HEADERS,
  rateLimitedResponse,
  ref,
  SCHEMAS,
  schemaComponents,
  VALIDATED_HEADERS,
} from "./openapi-components.ts";
import type { RuleCodeDeclaration } from "./rules.ts";
import { DEFAULT_DEPRECATED_AT, DEFAULT_LIMIT, DEFAULT_SUNSET_AT } from "./schemas.ts";
import { utf8Length } from "./text.ts";

/** The OpenAPI 3.1 document, as JSON data (checked by tests and Redocly, not typed field by field). */
// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is free-form JSON
export type OpenApiDocument = Record<string, any>;

export interface OpenApiOptions {
  /** The store's base path (default "/v1"); the default of both servers' `baseUrl` variable. */
  basePath?: string;
  /** Default `baseUrl` of the production server, e.g. "https://api.example.com/v1" (default: basePath). */
  productionUrl?: string;
  /** Default `baseUrl` of the staging server (default: basePath). */
  stagingUrl?: string;
  /** When getPet was deprecated (default 2026-11-25), as in `createPetStore`. */
  deprecatedAt?: Date;
  /** When getPet goes away (default 2030-12-05), as in `createPetStore`. */
  sunsetAt?: Date;
  /** How long an `Idempotency-Key` is kept, in ms (default 24 hours), as in `createPetStore`: the published retention. */
  idempotencyTtlMs?: number;
  /** The embedding application's rule codes (`createPetStore({ rules: { codes } })`): createPet's answers list them. */
  ruleCodes?: readonly RuleCodeDeclaration[] | undefined;
  /**
   * The discovery documents of the OAuth 2.0 issuers whose access tokens the store takes
   * (`jwt()`): each is an `openIdConnect` security scheme beside the bearer scheme of API keys.
   */
  openIdConfigurationUrls?: readonly string[] | undefined;
  /**
   * Whether the store answers CORS preflights (`createPetStore({ cors })`); without, the document
   * has no `OPTIONS` operations. Default true: the document of everything the API can serve.
   */
  cors?: boolean;
}

/** The names of the `openIdConnect` schemes, one per issuer: "openId", "openId2"… */
const openIdSchemes = (urls: readonly string[]) => urls.map((_, i) => (i === 0 ? "openId" : `openId${i + 1}`));

/** An operation's requirement: the scope on each scheme (OpenAPI 3.1 lets a bearer scheme list roles too). */
function securityFor(scope: string, urls: readonly string[]): Json {
  return [{ bearerAuth: [scope] }, ...openIdSchemes(urls).map((name) => ({ [name]: [scope] }))];
}

const petExample = { id: 1, name: "Rex", categoryId: 1, status: "available" };

/** The published retention of idempotency keys, in words ("24 hours", "90 seconds"). */
function retentionWords(ttlMs: number): string {
  const units: [number, string][] = [
    [3_600_000, "hour"],
    [60_000, "minute"],
    [1000, "second"],
  ];
  for (const [ms, unit] of units) {
    const n = ttlMs / ms;
    if (Number.isInteger(n)) return `${n} ${unit}${n === 1 ? "" : "s"}`;
  }
  return `${ttlMs} milliseconds`;
}

/** The `Idempotency-Key` request header: its format, scope, fingerprint and retention (the draft asks for the policy to be published). */
function idempotencyKeyParameter(ttlMs: number): Json {
  const retention = retentionWords(ttlMs);
  return {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description: `Makes the create safe to retry (IETF httpapi draft "The Idempotency-Key HTTP Header Field"): a retry with the same key and the same NewPet gets the first answer again (\`201\`, same body and \`Location\`, \`Idempotent-Replayed: true\`) and never a second pet, across time-outs, \`503\`s, crashes and server processes. The key is a structured-field string (\`"8e03978e-40d5-43e8-bc93-6894a57f9324"\`) or the same characters unquoted: 1 to 255 characters from \`!\` to \`~\` except \`"\` and \`\\\`; anything else, an empty value, or the header given twice is \`400 invalid_idempotency_key\` (checked after the key, before the body). Keys belong to the caller (the bearer token): another caller's identical key is another key. Two requests are the same when their NewPets are equal once defaults are applied (\`status\` omitted is \`available\`; key order does not matter); the same key with another NewPet is \`422 idempotency_key_reused\`, and a key whose first request is still being written is \`409 idempotency_key_in_use\` with \`Retry-After: 1\`. Retention: a key is kept for ${retention} after its first use; after that it is new again, and its record is removed.`,
    schema: {
      type: "string",
      pattern: '^([!#-\\[\\]-~]{1,255}|"[!#-\\[\\]-~]{1,255}")$',
      examples: ["8e03978e-40d5-43e8-bc93-6894a57f9324"],
    },
    "x-idempotency-retention-seconds": Math.floor(ttlMs / 1000),
  };
}

/**
 * A path's CORS preflight (`OPTIONS`): answered `204` before the key when the store allows the
 * page's origin, else `405` as any method the path does not serve.
 */
function preflightOperation(operationId: string, methods: string, pathParameters: Json[] = []): Json {
  return {
    operationId,
    summary: "CORS preflight",
    description: `A browser asks whether a page of another origin may call this path. When the service allows the request's \`Origin\` and \`Access-Control-Request-Method\` is sent, the answer is \`204\` before any key, allowing \`${methods}\`; otherwise \`405\`, as for any method this path does not serve. Every other answer to an allowed origin, errors included, carries \`Access-Control-Allow-Origin\`, \`Access-Control-Expose-Headers\` and \`Vary: Origin\`.`,
    tags: ["cors"],
    security: [],
    parameters: [
      ...pathParameters,
      { name: "Origin", in: "header", required: true, description: "The page's origin.", schema: { type: "string" } },
      {
        name: "Access-Control-Request-Method",
        in: "header",
        required: true,
        description: "The method the page means to use.",
        schema: { type: "string" },
      },
    ],
    responses: {
      "204": {
        description: "The origin is allowed: what a page may send to this path.",
        headers: {
          "X-Request-Id": ref(`${HEADERS}X-Request-Id`),
          "Cache-Control": ref(`${HEADERS}Cache-Control`),
          "X-Content-Type-Options": ref(`${HEADERS}X-Content-Type-Options`),
          "Access-Control-Allow-Origin": ref(`${HEADERS}Access-Control-Allow-Origin`),
          "Access-Control-Allow-Methods": ref(`${HEADERS}Access-Control-Allow-Methods`),
          "Access-Control-Allow-Headers": ref(`${HEADERS}Access-Control-Allow-Headers`),
          "Access-Control-Max-Age": ref(`${HEADERS}Access-Control-Max-Age`),
          "Access-Control-Expose-Headers": ref(`${HEADERS}Access-Control-Expose-Headers`),
          Vary: ref(`${HEADERS}Vary`),
        },
      },
      "405": ref("#/components/responses/MethodNotAllowed"),
    },
  };
}

function paths(
  query: Record<string, Json>,
  schemas: Record<string, Json>,
  sunset: string,
  ruleCodes: readonly RuleCode[],
  openIdUrls: readonly string[],
  cors: boolean,
): Json {
  const read = securityFor("pets:read", openIdUrls);
  const write = securityFor("pets:write", openIdUrls);
  const { description: _idDescription, ...petIdSchema } = schemas.Pet.properties.id;
  const requestId = ref("#/components/parameters/X-Request-Id");
  const ifNoneMatch = ref("#/components/parameters/If-None-Match");
  const petIdParameter = {
    name: "petId",
    in: "path",
    required: true,
    description: "The identifier of the animal: a decimal integer from 1 to 9007199254740991.",
    schema: petIdSchema,
  };
  return {
    "/pets": {
      get: {
        operationId: "listPets",
        summary: "List all animals",
        description:
          'Pets in ascending `id` (creation) order, optionally filtered by `status`. Pagination is by opaque cursor: when more pets follow, the `Link` header carries the URL of the next page (`rel="next"`); following it until it is absent visits every pet once. Unknown query parameters are ignored.',
        tags: ["pets"],
        security: read,
        parameters: [
          {
            name: "limit",
            in: "query",
            required: false,
            description: "Maximum number of animals to return. Given at most once.",
            schema: { ...query.limit, default: DEFAULT_LIMIT },
          },
          {
            name: "status",
            in: "query",
            required: false,
            description: "Filters by availability status (case-sensitive). Given at most once.",
            schema: query.status,
          },
          {
            name: "cursor",
            in: "query",
            required: false,
            description:
              'Opaque position from a previous page\'s `Link: rel="next"`; a cursor the service did not issue is refused.',
            schema: query.cursor,
          },
          ifNoneMatch,
          requestId,
        ],
        responses: {
          "200": {
            description: "A page of pets (the bare array).",
            headers: headers({ Link: "Link-Next", ...VALIDATED_HEADERS }),
            content: { [JSON_MEDIA]: { schema: ref(`${SCHEMAS}Pets`), example: [petExample] } },
          },
          "304": notModifiedResponse(),
          "400": errorResponse(["invalid_request", "invalid_query"]),
          ...commonErrors(),
        },
      },
      post: {
        operationId: "createPet",
        summary: "Add an animal",
        description:
          "Creates a pet from a NewPet. `status` defaults to `available`. Any other field (`id` included) is refused with `400 invalid_body` naming it. With an `Idempotency-Key`, retrying the create is safe: see that header.",
        tags: ["pets"],
        security: write,
        parameters: [ref("#/components/parameters/Idempotency-Key"), requestId],
        requestBody: {
          required: true,
          description:
            "A NewPet, sent as `application/json` in UTF-8 (parameters such as `charset=utf-8` are fine), not compressed: another `charset` or a `Content-Encoding` other than `identity` is refused with `415`. An object that repeats a member name (I-JSON, RFC 7493) is refused with `400 malformed_json`.",
          content: { [JSON_MEDIA]: { schema: ref(`${SCHEMAS}NewPet`), example: { name: "Rex", categoryId: 1 } } },
        },
        responses: {
          "201": {
            description:
              "The created pet, with the `id` the service assigned; or, for a retry with the same `Idempotency-Key` and NewPet, the pet its first request created (`Idempotent-Replayed: true`).",
            headers: headers({
              Location: "Location",
              "Idempotent-Replayed": "Idempotent-Replayed",
              "Cache-Control": "Cache-Control-Kept",
            }),
            content: { [JSON_MEDIA]: { schema: ref(`${SCHEMAS}Pet`), example: petExample } },
          },
          ...createPetErrors(ruleCodes),
          ...commonErrors(),
        },
      },
      ...(cors ? { options: preflightOperation("preflightPets", "GET, HEAD, POST") } : {}),
    },
    "/pets/{petId}": {
      get: {
        operationId: "getPet",
        summary: "Get an animal (deprecated)",
        description: `Deprecated: use \`listPets\` with the \`status\` filter instead. This operation goes away on ${sunset}; until then every answer about a pet carries the \`Deprecation\`, \`Sunset\` and \`Link: rel="successor-version"\` headers.`,
        tags: ["pets"],
        deprecated: true,
        "x-deprecated-sunset": sunset,
        security: read,
        parameters: [petIdParameter, ifNoneMatch, requestId],
        responses: {
          "200": {
            description: "The pet.",
            headers: headers({ ...DEPRECATION_HEADERS, ...VALIDATED_HEADERS }),
            content: { [JSON_MEDIA]: { schema: ref(`${SCHEMAS}Pet`), example: petExample } },
          },
          "304": notModifiedResponse(DEPRECATION_HEADERS),
          "400": errorResponse(["invalid_request", "invalid_pet_id"], DEPRECATION_HEADERS),
          "404": errorResponse(["pet_not_found"], DEPRECATION_HEADERS),
          ...commonErrors(DEPRECATION_HEADERS),
        },
      },
      ...(cors ? { options: preflightOperation("preflightPet", "GET, HEAD", [petIdParameter]) } : {}),
    },
  };
}

/**
 * The rate limits in each operation: their headers on its answers once the key is accepted (all
 * but 401, 403 and 500), and `429 rate_limited`. Both are optional: a server without limits sends neither.
 */
function withRateLimits(paths: Json): Json {
  const rateHeaders = Object.fromEntries(
    Object.entries(RATE_LIMIT_HEADERS).map(([name, c]) => [name, ref(`${HEADERS}${c}`)]),
  );
  for (const item of Object.values(paths) as Json[]) {
    for (const [method, operation] of Object.entries(item) as [string, Json][]) {
      if (method === "options") continue;
      for (const [status, response] of Object.entries(operation.responses) as [string, Json][]) {
        if (status !== "401" && status !== "403" && status !== "500")
          response.headers = { ...response.headers, ...rateHeaders };
      }
      const deprecated = operation.deprecated === true ? DEPRECATION_HEADERS : {};
      operation.responses["429"] = rateLimitedResponse(deprecated);
    }
  }
  return paths;
}

/**
 * The answers given outside any operation, kept as components for clients and checks: 404 and 405,
 * and what a server answers when Node's HTTP parser refuses a request before any handler runs.
 */
function unroutedResponses(): Json {
  return {
    NotFound: errorResponse(["not_found"]),
    MethodNotAllowed: errorResponse(["method_not_allowed"], { Allow: "Allow" }),
    BadRequest: errorResponse(["bad_request"]),
    RequestTimeout: errorResponse(["request_timeout"]),
    UriTooLong: errorResponse(["uri_too_long"]),
    HeadersTooLarge: errorResponse(["headers_too_large"]),
  };
}

/** A list of header names as code: "`Link`, `Location`". */
const codes = (names: string) =>
  names
    .split(", ")
    .map((name) => `\`${name}\``)
    .join(", ");

/**
 * The API's description, for those who call it: what it does, authentication, pagination, errors,
 * limits and caching (how a server is set up is the operator's, in docs/, not here).
 */
function description(basePath: string, cors: boolean): string {
  const paragraphs = [
    "An HTTP/JSON service that manages the animals offered in a pet store: list them (in pages, filtered by status), add one, get one.",
    `**Authentication.** Every operation needs an API key or an access token, sent as \`Authorization: Bearer <key>\`. It grants scopes: \`pets:read\` to list and get, \`pets:write\` to create. No credentials, or unknown ones, is \`401\`; a caller without the operation's scope gets \`403 insufficient_scope\`. This document is served without a key at \`${basePath}/openapi.json\`.`,
    '**Pagination.** `listPets` answers pages of pets in ascending `id` (creation) order, `limit` pets at most. When more follow, the `Link` header carries the next page\'s URL (`rel="next"`, with an opaque `cursor`); following it until it is absent visits every pet once.',
    `**Requests and errors.** Paths are exact (\`${basePath}/pets/\` is not \`${basePath}/pets\`) and \`HEAD\` is accepted wherever \`GET\` is. Checks run in this order: route (\`404 not_found\`, \`405 method_not_allowed\` with \`Allow\`), key (\`401\`; \`400 invalid_request\` when \`Authorization\` is given more than once), the operation's scope (\`403\`), content type, size and validation (\`415\`, \`413\`, \`400\`), then the operation. Every error is an \`Error\` body whose \`status\` equals the HTTP status. An \`Idempotency-Key\` makes a create safe to retry.`,
    "**Limits.** The service may limit how many requests each caller makes in a fixed window: answers then carry `RateLimit-Policy` and `RateLimit` (IETF draft-ietf-httpapi-ratelimit-headers), and a caller past its limit gets `429 rate_limited` with `Retry-After`, nothing done. A client address that sends too many bad keys or tokens gets `429 rate_limited` with `Retry-After` for the rest of the window.",
    "**Caching.** Pets and pages carry a strong `ETag`: sent back in `If-None-Match`, it gets `304 Not Modified` without a body while the answer is unchanged. Answers to a caller are `Cache-Control: private, no-cache` by default (a browser keeps them and revalidates; no shared cache keeps them), errors `no-store`. Answers of 1 KiB or more may be compressed (`zstd`, `br`, `gzip`, as `Accept-Encoding` prefers), each coding with its own `ETag`.",
  ];
  if (cors) {
    paragraphs.push(
      `**Browser pages of other origins.** Pages of the origins the service allows may call it (CORS): preflights are answered before the key, and every answer exposes ${codes(EXPOSED_HEADERS)} (and ${codes(RATE_LIMIT_EXPOSED)} with limits) to the page's script.`,
    );
  }
  return paragraphs.join("\n\n");
}

/**
 * Builds the OpenAPI 3.1 document of the API.
 *
 * @example writeFileSync("openapi.json", JSON.stringify(buildOpenApi(), null, 2))
 */
export function buildOpenApi(options: OpenApiOptions = {}): OpenApiDocument {
  const basePath = options.basePath ?? "/v1";
  const serverDefault = basePath === "" ? "/" : basePath;
  const sunsetAt = options.sunsetAt ?? DEFAULT_SUNSET_AT;
  const sunset = sunsetAt.toISOString().slice(0, 10);
  const { schemas, query } = schemaComponents();
  const ruleCodes = options.ruleCodes ?? [];
  const openIdUrls = options.openIdConfigurationUrls ?? [];
  const cors = options.cors ?? true;
  // The Error schema's code lists the table's codes; a served document adds the application's.
  const error = schemas.Error;
  if (ruleCodes.length > 0 && Array.isArray(error?.properties?.code?.enum)) {
    const code = { ...error.properties.code, enum: [...error.properties.code.enum, ...ruleCodes.map((r) => r.code)] };
    schemas.Error = { ...error, properties: { ...error.properties, code } };
  }
  // The variable's meaning is in the server's description: the OpenAPI 3.1 schema of 2021-04-15,
  // which swagger-parser (orval 7) bundles, misspells the variable's `description` and refuses it.
  const server = (name: string, url: string): Json => ({
    url: "{baseUrl}",
    description: `${name}: \`baseUrl\` is the ${name.toLowerCase()} base URL, including the base path (e.g. \`https://petstore.example.com${basePath}\`).`,
    variables: { baseUrl: { default: url } },
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "Pet Store API",
      version: "1.0.0",
      summary: "List, add and get the animals offered in a pet store.",
      description: description(basePath, cors),
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [
      server("Production", options.productionUrl ?? serverDefault),
      server("Staging", options.stagingUrl ?? serverDefault),
    ],
    security: [{ bearerAuth: [] }, ...openIdSchemes(openIdUrls).map((name) => ({ [name]: [] }))],
    tags: [
      { name: "pets", description: "The animals of the catalogue." },
      ...(cors ? [{ name: "cors", description: "Browser pages of other origins (CORS)." }] : []),
    ],
    paths: withRateLimits(paths(query, schemas, sunset, ruleCodes, openIdUrls, cors)),
    components: {
      schemas,
      parameters: {
        "X-Request-Id": {
          name: "X-Request-Id",
          in: "header",
          required: false,
          description: "Echoed back when it is 1 to 128 characters of `[A-Za-z0-9._-]`; otherwise a new id is made.",
          schema: { type: "string" },
        },
        "Idempotency-Key": idempotencyKeyParameter(options.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS),
        "If-None-Match": IF_NONE_MATCH,
      },
      headers: headerComponents(options.deprecatedAt ?? DEFAULT_DEPRECATED_AT, sunsetAt),
      responses: unroutedResponses(),
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "`Authorization: Bearer <API key>`. A key in the query string is never accepted. Scopes: `pets:read` (listPets, getPet) and `pets:write` (createPet); a key without the operation's scope gets `403 insufficient_scope`.",
        },
        ...Object.fromEntries(
          openIdSchemes(openIdUrls).map((name, i) => [
            name,
            {
              type: "openIdConnect",
              openIdConnectUrl: openIdUrls[i],
              description:
                "OAuth 2.0 access tokens (JWT, RFC 9068) of this issuer, e.g. from the client credentials grant, sent as `Authorization: Bearer <token>`, with the scope `pets:read` or `pets:write` in their `scope` claim.",
            },
          ]),
        ),
      },
    },
  };
}

/** The `{base}/openapi.json` route of `createPetStore`: the document, built on first use and then kept. */
export function openApiRoute(options: OpenApiOptions): () => JsonText {
  let document: JsonText | undefined;
  return () => {
    if (document === undefined) {
      const text = JSON.stringify(buildOpenApi(options));
      document = { text, bytes: utf8Length(text) };
    }
    return document;
  };
}
