/**
 * Validators and compression on every backend (contract 1.4): the same pets give the same ETags
 * on memory, SQLite, Redis and Postgres (they are derived from the data, not from a process or a
 * backend), a page of 100 pets read there and compressed with each coding by the Node adapter
 * decodes byte-identical to the plain one, nothing below 1 KiB is compressed, and If-None-Match
 * answers 304.
 */
import http from "node:http";
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from "node:zlib";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createNodeHandler } from "../../adapters/node-http.ts";
import { memoryStorage } from "../../lib/entries/storage.ts";
import type { PetStore } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";
import { backends } from "./backends.ts";
import { RUN } from "./services.ts";

const KEY = "validators-key";
const s = suite("storage: validators and compression");
const closers: (() => Promise<void>)[] = [];
const cleanups: (() => Promise<void>)[] = [];
s.after(async () => {
  for (const close of closers) await close();
  for (const cleanup of cleanups) await cleanup();
});

const DECODE: Record<string, (b: Buffer) => Buffer> = {
  gzip: gunzipSync,
  br: brotliDecompressSync,
  zstd: zstdDecompressSync,
};

/** The same 105 pets, in the same order, whatever the store (names of every kind of character). */
async function fill(store: PetStore): Promise<void> {
  const statuses = ["available", "pending", "sold"] as const;
  for (let i = 1; i <= 105; i++) {
    const name = i % 10 === 0 ? `Ünïcødé 🐶 ${i} "quoted"` : `pet-${i}`;
    await store.createPet({ name, categoryId: (i % 5) + 1, status: statuses[i % 3] });
  }
}

/** GET `path` through the Node adapter on a socket: status, headers and the body as sent. */
function ask(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; raw: Buffer }>((resolve, reject) => {
    const req = http.request(
      { port, host: "127.0.0.1", path, headers: { authorization: `Bearer ${KEY}`, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, raw: Buffer.concat(chunks) }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function listen(store: PetStore) {
  const server = http.createServer(createNodeHandler(store));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

const PATHS = [
  "/v1/pets?limit=100",
  "/v1/pets?limit=100&status=sold",
  "/v1/pets?limit=7",
  "/v1/pets/10",
  "/v1/pets/105",
];

/** What a memory store with the same pets answers: the reference every backend must give. */
async function reference(): Promise<Map<string, { etag: string; raw: Buffer }>> {
  const store = createPetStore({ auth: [KEY], storage: memoryStorage() });
  await fill(store);
  const server = await listen(store);
  const answers = new Map<string, { etag: string; raw: Buffer }>();
  for (const path of PATHS) {
    const answer = await ask(server.port, path);
    answers.set(path, { etag: answer.headers.etag as string, raw: answer.raw });
  }
  await server.close();
  await store.close();
  return answers;
}

const expected = reference();

for (const backend of backends("validators and compression")) {
  const ns = `${RUN}etag`;
  // One store a backend, filled once, served by both tests.
  let served: Promise<{ port: number }> | undefined;
  const serve = () => {
    served ??= (async () => {
      const store = createPetStore({ auth: [KEY], storage: await backend.open(ns) });
      const server = await listen(store);
      closers.push(async () => {
        await server.close();
        await store.close();
      });
      await fill(store);
      return server;
    })();
    return served;
  };
  cleanups.push(() => backend.cleanup([ns]));

  s(
    `${backend.name}: pets and pages carry the ETags a memory store with the same pets gives, and answer 304 to them`,
    async () => {
      const server = await serve();
      for (const [path, want] of await expected) {
        const answer = await ask(server.port, path);
        assert.is(answer.headers.etag, want.etag, path);
        assert.ok(answer.raw.equals(want.raw), `${path}: the same body`);
        const again = await ask(server.port, path, { "if-none-match": want.etag });
        assert.is(again.status, 304, path);
      }
    },
  );

  s(
    `${backend.name}: a page of 100 pets in zstd, br and gzip decodes byte-identical to the plain one; a pet (below 1 KiB) is not compressed`,
    async () => {
      const server = await serve();
      {
        const plain = await ask(server.port, "/v1/pets?limit=100");
        assert.is(plain.status, 200);
        assert.ok(plain.raw.length > 1024);
        for (const coding of ["zstd", "br", "gzip"]) {
          const coded = await ask(server.port, "/v1/pets?limit=100", { "accept-encoding": coding });
          assert.is(coded.headers["content-encoding"], coding);
          assert.ok(
            (DECODE[coding] as (b: Buffer) => Buffer)(coded.raw).equals(plain.raw),
            `${coding}: byte-identical`,
          );
          const again = await ask(server.port, "/v1/pets?limit=100", {
            "accept-encoding": coding,
            "if-none-match": coded.headers.etag as string,
          });
          assert.is(again.status, 304, coding);
        }
        const pet = await ask(server.port, "/v1/pets/10", { "accept-encoding": "zstd, br, gzip" });
        assert.is(pet.headers["content-encoding"], undefined);
        assert.ok(pet.raw.length < 1024);
      }
    },
  );
}

s.run();
