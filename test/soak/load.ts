/**
 * The soak's load, in its own process so that its allocations never count in the server's
 * memory: autocannon with N connections cycling through a mix of one creation for nine reads
 * (pages, filtered pages, single pets). Started by soak.ts with fork(); sends its result back
 * over IPC.
 *
 * Arguments: <base url, e.g. http://127.0.0.1:4000/v1> <key> <seconds> <connections> <known pets>
 */

interface Result {
  requests: { total: number };
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}
type Autocannon = (options: Record<string, unknown>) => Promise<Result>;

const [base, key, seconds, connections, known] = process.argv.slice(2);
if (base === undefined || key === undefined)
  throw new Error("usage: load.ts <base> <key> <seconds> <connections> <known pets>");
const url = new URL(base);
const prefix = url.pathname.replace(/\/$/, "");
const knownPets = Math.max(1, Number(known));
const auth = { authorization: `Bearer ${key}` };
const statuses = ["available", "pending", "sold"] as const;
let n = 0;

/** A read of a pet that exists (ids 1..known were created before the load). */
const getPet = {
  method: "GET",
  path: `${prefix}/pets/1`,
  headers: auth,
  setupRequest: (request: { path: string }) => {
    n++;
    request.path = `${prefix}/pets/${1 + ((n * 7919) % knownPets)}`;
    return request;
  },
};

const requests = [
  {
    method: "POST",
    path: `${prefix}/pets`,
    headers: { ...auth, "content-type": "application/json" },
    setupRequest: (request: { body?: string }) => {
      n++;
      request.body = JSON.stringify({ name: `soak ${n}`, categoryId: 1 + (n % 50), status: statuses[n % 3] });
      return request;
    },
  },
  { method: "GET", path: `${prefix}/pets?limit=20`, headers: auth },
  getPet,
  getPet,
  { method: "GET", path: `${prefix}/pets?limit=5&status=sold`, headers: auth },
  getPet,
  { method: "GET", path: `${prefix}/pets?limit=100&status=pending`, headers: auth },
  getPet,
  getPet,
  // No HEAD: autocannon's parser would wait for the body its Content-Length announces.
  { method: "GET", path: `${prefix}/pets?limit=1&status=available`, headers: auth },
];

const { default: autocannon } = (await import("autocannon" as string)) as { default: Autocannon };
const result = await autocannon({
  url: url.origin,
  connections: Number(connections),
  duration: Number(seconds),
  timeout: 10,
  requests,
});
const byStatus: Record<string, number> = {};
for (const [status, { count }] of Object.entries(result.statusCodeStats)) byStatus[status] = Number(count);
process.send?.({ total: result.requests.total, errors: result.errors, timeouts: result.timeouts, byStatus });
process.disconnect?.();
