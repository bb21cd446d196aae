/**
 * F1 and F3, in a child process of Bun or Deno (not Node): argv[2] is
 *   - "ours": the fetch handler (createFetchHandler) on a memory store of BENCH_PETS pets;
 *   - "bare": a bare handler that checks the bearer header and answers the same bytes as a
 *     pre-serialised string with the same headers (BENCH_REFERENCE, taken from ours), with a
 *     fresh x-request-id, as ours does.
 * Served by `Bun.serve` or `Deno.serve` (whichever runs this), on 127.0.0.1 and a free port.
 * Talks to the parent on stdout (one JSON line: { type: "ready", port }); stops on SIGTERM or when
 * its stdin closes (the parent went away).
 */
import { benchPet } from "../fill.ts";

// Our code as users run it: the compiled dist/ (bench/run.ts builds it first), as the Node servers.
const dist = new URL("../../dist/", import.meta.url).href;
const { createFetchHandler } = (await import(`${dist}adapters/fetch.js`)) as typeof import("../../adapters/fetch.ts");
const { createPetStore } = (await import(`${dist}lib/index.js`)) as typeof import("../../lib/index.ts");

type Handler = (request: Request) => Response | Promise<Response>;
declare const Bun: { serve(options: { port: number; hostname: string; fetch: Handler }): { port: number } } | undefined;
declare const Deno:
  | {
      serve(
        options: { port: number; hostname: string; onListen(a: { port: number }): void },
        handler: Handler,
      ): unknown;
    }
  | undefined;

const mode = process.argv[2];
const authorization = `Bearer ${process.env.BENCH_KEY ?? "bench-key"}`;
const JSON_TYPE = "application/json; charset=utf-8";
const UNAUTHORIZED = JSON.stringify({
  code: "unauthorized",
  message: "A valid API key is required. Send the key as Authorization: Bearer <key>.",
  status: 401,
});

function bare(): Handler {
  const raw = process.env.BENCH_REFERENCE;
  if (raw === undefined) throw new Error("bench/servers/fetch.ts bare needs BENCH_REFERENCE");
  const ref = JSON.parse(raw) as { path: string; status: number; headers: Record<string, string>; body: string };
  return (request) => {
    if (request.headers.get("authorization") !== authorization) {
      return new Response(UNAUTHORIZED, {
        status: 401,
        headers: { "content-type": JSON_TYPE, "www-authenticate": 'Bearer realm="petstore"' },
      });
    }
    const url = request.url;
    if (request.method !== "GET" || url.slice(url.indexOf("/", url.indexOf("//") + 2)) !== ref.path) {
      return new Response("{}", { status: 404, headers: { "content-type": JSON_TYPE } });
    }
    return new Response(ref.body, {
      status: ref.status,
      headers: { ...ref.headers, "x-request-id": crypto.randomUUID() },
    });
  };
}

async function ours(): Promise<Handler> {
  const store = createPetStore({ auth: [process.env.BENCH_KEY ?? "bench-key"] });
  const pets = Number(process.env.BENCH_PETS ?? 0);
  for (let id = 1; id <= pets; id++) {
    const { name, categoryId, status } = benchPet(id);
    await store.createPet({ name, categoryId, status });
  }
  return createFetchHandler(store);
}

const handler = mode === "ours" ? await ours() : mode === "bare" ? bare() : undefined;
if (handler === undefined)
  throw new Error(`bench/servers/fetch.ts: unknown mode ${JSON.stringify(mode)} (ours or bare)`);
const ready = (port: number) => process.stdout.write(`${JSON.stringify({ type: "ready", port })}\n`);
if (typeof Bun !== "undefined") ready(Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: handler }).port);
else if (typeof Deno !== "undefined")
  Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: (a) => ready(a.port) }, handler);
else throw new Error("bench/servers/fetch.ts: run it with bun or deno");

process.on("SIGTERM", () => process.exit(0));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
