/**
 * `petstore-lib/docs`: the API reference page at `GET /docs`, Swagger UI from the optional
 * package swagger-ui-dist (no CDN), reading the store's `{base}/openapi.json`; without the
 * package every docs path answers `503` naming it. `createDocs` is HTTP-neutral,
 * `createDocsHandler` its node:http form.
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { PetStoreError } from "petstore-lib";
import { newRequestId } from "petstore-lib/adapter";
import { BASE_PATH_PATTERN, Responder } from "petstore-lib/internal";
import { mustClose } from "petstore-lib/node-http";
import { ASSETS, DOCS_PACKAGE, distDir, docsAvailable } from "./docs-files.ts";

export interface DocsOptions {
  /** The store's base path, where `openapi.json` is served (default "/v1"). */
  basePath?: string;
  /** Where the page lives (default "/docs"); its assets live under `{path}/`. */
  path?: string;
}

export interface DocsResponse {
  status: number;
  headers: Record<string, string>;
  /** Empty for HEAD. */
  body: Buffer;
}

// Scripts and styles only from this server; API calls ("Try it out") may go to another server
// picked in the page's server list. Swagger UI sets inline styles and data: images itself.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self' http: https:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

/** The answer of every docs path when swagger-ui-dist is not installed. */
function unavailable(): DocsResponse {
  const body = Buffer.from(
    JSON.stringify({
      code: "docs_unavailable",
      message: `The API reference page needs the optional package ${DOCS_PACKAGE}: run npm install ${DOCS_PACKAGE}`,
      status: 503,
    }),
  );
  const headers = {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(body.length),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
  return { status: 503, headers, body };
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(path: string): string {
  const p = escapeHtml(path);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pet Store API reference</title>
<link rel="stylesheet" href="${p}/swagger-ui.css">
<link rel="icon" type="image/png" href="${p}/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="${p}/favicon-16x16.png" sizes="16x16">
<style>.swagger-ui .json-schema-2020-12__attribute--primary { text-transform: none; } /* array<Pet>, not array<pet> */</style>
</head>
<body>
<div id="swagger-ui"></div>
<script src="${p}/swagger-ui-bundle.js"></script>
<script src="${p}/init.js"></script>
</body>
</html>
`;
}

/**
 * A Swagger UI plugin: an array whose items are a `$ref` to a named schema is labelled with that
 * name, so the Pets schema reads `array<Pet>` (Swagger UI labels an array of an unresolved
 * reference `array<any>`, and `array<object>` once resolved). It passes its own `getType` to
 * the context Swagger UI builds for its schema views; every other schema keeps Swagger UI's label.
 */
const NAMED_TYPES = `function PetStoreNamedTypes() {
  var named = function (schema) {
    if (!schema || typeof schema !== "object" || typeof schema.$ref !== "string") return undefined;
    var match = /^#\\/components\\/schemas\\/([^/]+)$/.exec(schema.$ref);
    return match ? decodeURIComponent(match[1]) : undefined;
  };
  return {
    wrapComponents: {
      withJSONSchema202012SystemContext: function (Original, system) {
        return function (Component, overrides) {
          overrides = overrides || {};
          var base = system.fn.jsonSchema202012.getType;
          var getType = function (schema, seen) {
            if (schema && typeof schema === "object" && !schema.prefixItems && named(schema.items)) {
              return "array<" + named(schema.items) + ">";
            }
            return base(schema, seen);
          };
          var fn = Object.assign({}, overrides.fn, { getType: getType });
          return Original(Component, Object.assign({}, overrides, { fn: fn }));
        };
      },
    },
  };
}`;

/**
 * A Swagger UI plugin: the page lists one server, the one it was served from
 * (`location.origin` + the store's base path), so "Try it out" calls this server and the
 * selector shows its real URL. The document itself is not changed (its production and staging
 * servers, with their `{baseUrl}` variable, are what `{base}/openapi.json` serves).
 */
const THIS_SERVER = `function PetStoreThisServer(basePath) {
  return function () {
    return {
      statePlugins: {
        spec: {
          wrapActions: {
            updateSpec: function (original) {
              return function (text) {
                try {
                  var doc = typeof text === "string" ? JSON.parse(text) : null;
                  if (doc && typeof doc === "object" && Array.isArray(doc.servers)) {
                    doc.servers = [{ url: window.location.origin + basePath, description: "This server" }];
                    return original(JSON.stringify(doc));
                  }
                } catch (error) {
                  // not JSON: Swagger UI reports it as it is
                }
                return original(text);
              };
            },
          },
        },
      },
    };
  };
}`;

function initScript(documentUrl: string, basePath: string): string {
  const config = {
    url: documentUrl,
    dom_id: "#swagger-ui",
    deepLinking: true,
    // A key pasted in "Authorize" is forgotten on reload: never written to this browser's localStorage.
    persistAuthorization: false,
    displayRequestDuration: true,
    displayOperationId: true,
    // The default would send the document to validator.swagger.io for a badge.
    validatorUrl: null,
  };
  // The presets and plugins cannot be written as JSON; everything else is.
  return `${NAMED_TYPES}
${THIS_SERVER}
window.ui = SwaggerUIBundle(Object.assign(${JSON.stringify(config)}, {
  presets: [SwaggerUIBundle.presets.apis],
  plugins: [PetStoreNamedTypes, PetStoreThisServer(${JSON.stringify(basePath)})],
  layout: "BaseLayout",
}));
`;
}

/**
 * The docs pages as an HTTP-neutral function: the answer for a request, or `undefined` when
 * the path is not one of the docs' (so the caller routes it elsewhere).
 *
 * @example const docs = createDocs({ basePath: "/v1" }); docs("GET", "/docs")?.status // 200
 */
export function createDocs(options: DocsOptions = {}): (method: string, url: string) => DocsResponse | undefined {
  const basePath = options.basePath ?? "/v1";
  const path = options.path ?? "/docs";
  if (!BASE_PATH_PATTERN.test(path)) {
    throw new TypeError(`createDocs: path must look like "/docs" (got ${JSON.stringify(path)})`);
  }
  const files = new Map<string, { type: string; body: Buffer; cache: string }>();
  files.set(path, { type: "text/html; charset=utf-8", body: Buffer.from(page(path)), cache: "no-cache" });
  files.set(`${path}/init.js`, {
    type: "text/javascript; charset=utf-8",
    body: Buffer.from(initScript(`${basePath}/openapi.json`, basePath)),
    cache: "no-cache",
  });
  // The package's files are read once, on first request, and kept (the bundle is ~1.5 MB).
  function file(name: string) {
    let entry = files.get(name);
    if (entry === undefined && name.startsWith(`${path}/`)) {
      const asset = name.slice(path.length + 1);
      const type = ASSETS[asset];
      const dir = distDir();
      if (type === undefined || dir === undefined) return undefined;
      entry = { type, body: readFileSync(join(dir, asset)), cache: "public, max-age=3600" };
      files.set(name, entry);
    }
    return entry;
  }

  return function docs(method, url) {
    const name = url.split("?", 1)[0] as string;
    if (name !== path && !name.startsWith(`${path}/`)) return undefined;
    const m = method.toUpperCase();
    if (!docsAvailable() && (name === path || name === `${path}/init.js` || name.slice(path.length + 1) in ASSETS)) {
      const answer = unavailable();
      return m === "HEAD" ? { ...answer, body: Buffer.alloc(0) } : answer;
    }
    const entry = file(name);
    if (entry === undefined) return undefined;
    if (m !== "GET" && m !== "HEAD") {
      const responder = new Responder({ head: false, requestId: newRequestId() });
      const refused = responder.error(new PetStoreError("method_not_allowed"), { allow: "GET, HEAD" });
      return { ...refused, body: Buffer.from(refused.body) };
    }
    const headers: Record<string, string> = {
      "content-type": entry.type,
      "content-length": String(entry.body.length),
      "cache-control": entry.cache,
      "x-content-type-options": "nosniff",
    };
    if (entry.type.startsWith("text/html")) {
      headers["content-security-policy"] = CSP;
      headers["referrer-policy"] = "no-referrer";
    }
    return { status: 200, headers, body: m === "HEAD" ? Buffer.alloc(0) : entry.body };
  };
}

/**
 * The docs pages for a node:http server: answers and returns true for a docs path, returns
 * false (touching nothing) for any other.
 *
 * @example const docs = createDocsHandler({ basePath: "/v1" });
 *   http.createServer((req, res) => docs(req, res) || petStoreHandler(req, res));
 */
export function createDocsHandler(options: DocsOptions = {}): (req: IncomingMessage, res: ServerResponse) => boolean {
  const docs = createDocs(options);
  return (req, res) => {
    const answer = docs(req.method ?? "GET", req.url ?? "/");
    if (answer === undefined) return false;
    // A page request has no use for a body: one within the store's default limit is drained so
    // keep-alive stays safe; a larger or unannounced one is left unread and the connection closed.
    const close = mustClose(req, req.headers, 64 * 1024);
    if (!close) req.resume();
    res.writeHead(answer.status, close ? { ...answer.headers, connection: "close" } : answer.headers);
    res.end(answer.body);
    return true;
  };
}

const byBasePath = new Map<string, ReturnType<typeof createDocs>>();

/**
 * The docs for the standalone server's own routes: for a docs path, a route answering it from
 * the store's base path; `undefined` for any other path. The server answers HEAD and refuses
 * other methods itself.
 * @deprecated since 1.1.0 (removed in 2.0): the standalone server's own plumbing; use `createDocs`.
 */
export function docsRoute(path: string):
  | ((context: { store: { basePath: string } }) => {
      status: number;
      contentType: string;
      body: Uint8Array;
      headers: Record<string, string>;
    })
  | undefined {
  const known = path === "/docs" || path === "/docs/init.js" || (path.startsWith("/docs/") && path.slice(6) in ASSETS);
  if (!known) return undefined;
  return ({ store }) => {
    let docs = byBasePath.get(store.basePath);
    if (docs === undefined) {
      docs = createDocs({ basePath: store.basePath });
      byBasePath.set(store.basePath, docs);
    }
    const { status, body, headers } = docs("GET", path) as DocsResponse;
    const { "content-type": contentType = "", "content-length": _length, ...rest } = headers;
    return { status, contentType, body, headers: rest };
  };
}
