/** The server's own routes against the base path: when a path under it can skip the route check. */

import { test } from "uvu";
import * as assert from "uvu/assert";
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
