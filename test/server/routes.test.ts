/**
 * The server's own routes: against the base path (when a path under it can skip the route check),
 * the headers of their answers, and what the docs page's script tells Swagger UI.
 */

import { test } from "uvu";
import * as assert from "uvu/assert";
import { createDocs } from "../../server/docs.ts";
import { startServer } from "../../server/index.ts";
import { serveMetrics } from "../../server/metrics.ts";
import { routesMayLieUnder, serverRoute } from "../../server/routes.ts";

test("routesMayLieUnder: false only for base paths none of the server's routes can lie under", () => {
  for (const basePath of ["/v1", "/shop/v1", "/doc", "/health", "/readyzz", "/docsv1"]) {
    assert.is(routesMayLieUnder(basePath), false, basePath);
  }
  for (const basePath of ["", "/healthz", "/readyz", "/docs", "/docs/v1", "/healthz/v1"]) {
    assert.is(routesMayLieUnder(basePath), true, basePath);
  }
});

test("routesMayLieUnder: every path serverRoute claims lies under a base path it answers true for", () => {
  for (const path of ["/healthz", "/readyz", "/docs", "/docs/init.js"]) {
    assert.ok(serverRoute(path) !== undefined, `${path} is a server route`);
    assert.ok(routesMayLieUnder(path), path);
  }
});

test("routes: every answer of the standalone server carries X-Content-Type-Options: nosniff, its own routes' and the metrics port's too", async () => {
  const server = await startServer({
    port: 0,
    host: "127.0.0.1",
    storage: "memory",
    basePath: "/v1",
    logLevel: "silent",
    apiKeys: ["routes-key-123456"],
  });
  const metrics = await serveMetrics("127.0.0.1", 0, async () => "up 1\n", "text/plain; version=0.0.4; charset=utf-8");
  const origin = new URL(server.url).origin;
  const metricsOrigin = new URL(metrics.url).origin;
  try {
    const asked: [string, string][] = [
      ["GET", `${origin}/healthz`],
      ["HEAD", `${origin}/healthz`],
      ["GET", `${origin}/readyz`],
      ["POST", `${origin}/healthz`],
      ["GET", `${origin}/docs`],
      ["GET", `${origin}/docs/init.js`],
      ["GET", `${origin}/docs/swagger-ui.css`],
      ["GET", `${origin}/docs/nothing.js`],
      ["GET", `${origin}/nowhere`],
      ["GET", `${server.url}/openapi.json`],
      ["GET", `${server.url}/pets`],
      ["GET", `${metricsOrigin}/metrics`],
      ["HEAD", `${metricsOrigin}/metrics`],
      ["POST", `${metricsOrigin}/metrics`],
      ["GET", `${metricsOrigin}/elsewhere`],
    ];
    for (const [method, url] of asked) {
      const res = await fetch(url, { method });
      await res.arrayBuffer();
      assert.is(res.headers.get("x-content-type-options"), "nosniff", `${method} ${url} (${res.status})`);
    }
  } finally {
    await server.close();
    await metrics.close();
  }
});

test("routes: the docs page's script has Swagger UI forget a pasted key (persistAuthorization: false)", () => {
  const init = createDocs({ basePath: "/v1" })("GET", "/docs/init.js");
  assert.is(init?.status, 200);
  assert.match(init?.body.toString() ?? "", /"persistAuthorization":false/);
  assert.not.match(init?.body.toString() ?? "", /persistAuthorization":true/);
});

test.run();
