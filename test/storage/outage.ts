/**
 * Helpers of the outage tests: a free port, a hang guard, a bounded wait, and the checks that
 * every operation of a store answers 503 storage_unavailable while its backend is away.
 */
import { createServer } from "node:net";
import * as assert from "uvu/assert";
import type { PetStore } from "../../lib/index.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import { call, errorOf } from "../support/helpers.ts";

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** How a promise settled within `ms`: "resolved", "rejected", or "hung" (a hang guard, not a timing assertion). */
export async function settles(promise: Promise<unknown>, ms: number): Promise<"resolved" | "rejected" | "hung"> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), ms);
  });
  const outcome = promise.then(
    () => "resolved" as const,
    () => "rejected" as const,
  );
  try {
    return await Promise.race([outcome, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` every 100 ms until it is true, at most `ms`; returns its last answer. */
export async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every storage call rejects (none resolves, none hangs past `hangMs`). */
export async function storageRejectsEverything(storage: PetStorage, hangMs: number): Promise<void> {
  const calls: [string, () => unknown][] = [
    ["get", () => storage.get(1)],
    ["list", () => storage.list({ after: 0, limit: 10 })],
    ["list by status", () => storage.list({ status: "sold", after: 0, limit: 10 })],
    ["create", () => storage.create({ name: "during outage", categoryId: 1, status: "available" })],
    ["ping", () => storage.ping()],
  ];
  const outcomes = await Promise.all(calls.map(([, run]) => settles(Promise.resolve().then(run), hangMs)));
  calls.forEach(([what], i) => {
    assert.is(outcomes[i], "rejected", `storage.${what} must reject while the backend is away`);
  });
}

/** Every operation through handle() answers 503 storage_unavailable with Retry-After: 1. */
export async function answers503(store: PetStore): Promise<void> {
  const responses = await Promise.all([
    call(store, "GET", "/v1/pets"),
    call(store, "GET", "/v1/pets", { query: "status=sold&limit=5" }),
    call(store, "GET", "/v1/pets/1"),
    call(store, "GET", "/v1/pets/424242"),
    call(store, "POST", "/v1/pets", { body: JSON.stringify({ name: "during outage", categoryId: 1 }) }),
  ]);
  for (const response of responses) {
    assert.is(response.status, 503, `expected 503, got ${response.status} ${response.body}`);
    assert.is(errorOf(response).code, "storage_unavailable");
    assert.is(response.headers["retry-after"], "1");
  }
}
