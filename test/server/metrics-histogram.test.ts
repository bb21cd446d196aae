/**
 * The server's histograms are counted by hand (server/metrics.ts: prom-client's own `observe`
 * hashes its labels each call, and metrics on then missed O1's target; bench/README.md). Held here
 * to prom-client's Histogram: the same observations give the same exposition text.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Observation } from "../../lib/entries/observe.ts";
import { createMetrics, loadPromClient, REQUEST_BUCKETS, STORAGE_BUCKETS } from "../../server/metrics.ts";

/** The lines of one metric's exposition, labels in name order, sorted: the same series whatever order prom-client keeps. */
function normalised(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => line.replace(/\{(.*)\}/, (_, labels: string) => `{${labels.split(",").sort().join(",")}}`))
    .sort();
}

test("metrics: the hand-counted histograms render what prom-client's Histogram renders for the same observations", async () => {
  const prom = await loadPromClient();
  const ours = createMetrics(prom);
  const registry = new prom.Registry();
  const requests = new prom.Histogram({
    name: "http_server_request_duration_seconds",
    help: "Duration of HTTP server requests answered by the Pet Store API.",
    labelNames: ["http_request_method", "http_route", "http_response_status_code"],
    buckets: REQUEST_BUCKETS,
    registers: [registry],
  });
  const storage = new prom.Histogram({
    name: "petstore_storage_operation_duration_seconds",
    help: "Duration of calls to the storage backend.",
    labelNames: ["operation", "backend"],
    buckets: STORAGE_BUCKETS,
    registers: [registry],
  });
  const routes = ["/v1/pets", "/v1/pets/{petId}", undefined];
  const methods = ["GET", "POST", "HEAD"];
  for (let i = 0; i < 3000; i++) {
    // Every bucket, and every bound itself (a value on a bound counts in that bound's bucket).
    const bound = REQUEST_BUCKETS[(i / 10) % REQUEST_BUCKETS.length] as number;
    const durationMs = i % 10 === 0 ? bound * 1000 : (i * 7.3) % 12_000;
    const route = routes[i % 3];
    const method = methods[i % 3] as string;
    const status = [200, 201, 404, 503][i % 4] as number;
    ours.observe({ kind: "request", method, route, status, durationMs } as Observation);
    requests.observe(
      {
        http_request_method: method,
        ...(route === undefined ? {} : { http_route: route }),
        http_response_status_code: status,
      },
      durationMs / 1000,
    );
    const operation = (["listPets", "getPet", "createPet"] as const)[i % 3];
    ours.observe({
      kind: "storage",
      operation,
      backend: "redis",
      durationMs: durationMs / 100,
      failed: false,
    } as Observation);
    storage.observe({ operation, backend: "redis" }, durationMs / 100 / 1000);
  }
  for (const name of ["http_server_request_duration_seconds", "petstore_storage_operation_duration_seconds"]) {
    assert.equal(
      normalised(await ours.registry.getSingleMetricAsString(name)),
      normalised(await registry.getSingleMetricAsString(name)),
      name,
    );
  }
});

test.run();
