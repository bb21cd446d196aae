/**
 * A pet store behind createFetchHandler, served by the runtime running this file (`bun` or
 * `deno run`): the socket targets of the conformance suite and the storage smoke tests.
 * Prints `listening <port>` once; then obeys one command a line on stdin, answering `ok` or
 * `error <message>` a line on stdout (in process: nothing of this is reachable over HTTP):
 *   reset              a fresh, empty store (new storage) that accepts the key
 *   seed <NewPet JSON> creates that pet in the current store
 *   exit               closes the store and exits
 * Environment: PETSTORE_STORAGE (a storage spec as openStorage takes, default memory, where
 * "{ns}" stands for the namespace of each store: CHILD_NAMESPACE, "_" and the reset's number,
 * e.g. "redis://127.0.0.1:6379?namespace={ns}"), PETSTORE_KEY (the one API key), and
 * PETSTORE_JWT_ISSUER with PETSTORE_JWT_AUDIENCE (access tokens of that issuer, besides the key).
 */
import { createInterface } from "node:readline";
import { createFetchHandler } from "../../adapters/fetch.ts";
import { jwt } from "../../lib/entries/auth.ts";
import type { PetStore } from "../../lib/index.ts";
import { createPetStore, openStorage } from "../../lib/index.ts";
import { CORS_ORIGIN } from "./conformance-origin.ts";

declare const Bun:
  | { serve(options: { port: number; hostname: string; fetch: (r: Request) => Promise<Response> }): { port: number } }
  | undefined;
declare const Deno:
  | {
      serve(
        options: {
          port: number;
          hostname: string;
          automaticCompression: boolean;
          onListen(addr: { port: number }): void;
        },
        handler: (r: Request) => Promise<Response>,
      ): unknown;
    }
  | undefined;

/** The conformance suite's read-only key (pets:read only). */
const READER = { name: "reader", key: "conformance-read-key", scopes: ["pets:read"] };
const spec = process.env.PETSTORE_STORAGE ?? "memory";
const key = process.env.PETSTORE_KEY ?? "conformance-key";
const namespace = process.env.CHILD_NAMESPACE ?? `c${process.pid}`;
let generation = 0;
let store: PetStore | undefined;
let handler: (request: Request) => Promise<Response> = () => Promise.resolve(new Response("starting", { status: 503 }));

/** The verifiers of access tokens the environment asks for (none without PETSTORE_JWT_ISSUER). */
function tokens() {
  const issuer = process.env.PETSTORE_JWT_ISSUER;
  const audience = process.env.PETSTORE_JWT_AUDIENCE;
  return issuer === undefined || audience === undefined ? [] : [jwt({ issuer, audience })];
}

async function reset(): Promise<void> {
  const old = store;
  generation++;
  const storage = await openStorage(spec.replaceAll("{ns}", `${namespace}_${generation}`));
  store = createPetStore({
    auth: { keys: [key, READER], verify: tokens() },
    storage,
    cors: { origins: [CORS_ORIGIN] },
  });
  handler = createFetchHandler(store);
  await old?.close();
}

const fetch = (request: Request) => handler(request);
const say = (line: string) => process.stdout.write(`${line}\n`);

await reset();
if (typeof Bun !== "undefined") say(`listening ${Bun.serve({ port: 0, hostname: "127.0.0.1", fetch }).port}`);
else if (typeof Deno !== "undefined") {
  // Compression on (off by default since Deno 2.5): answers to clients that accept gzip are compressed.
  const onListen = ({ port }: { port: number }) => say(`listening ${port}`);
  Deno.serve({ port: 0, hostname: "127.0.0.1", automaticCompression: true, onListen }, fetch);
} else throw new Error("fetch-child: run me with bun or deno");

for await (const line of createInterface({ input: process.stdin })) {
  try {
    if (line === "reset") await reset();
    else if (line.startsWith("seed ")) await store?.createPet(JSON.parse(line.slice(5)));
    else if (line === "exit") {
      await store?.close();
      say("ok");
      process.exit(0);
    } else throw new Error(`unknown command ${JSON.stringify(line)}`);
    say("ok");
  } catch (error) {
    say(`error ${String((error as Error)?.message ?? error).replace(/\n/g, " ")}`);
  }
}
process.exit(0);
