/**
 * The baselines, in a child process: the least a hand-written server must do to give the same
 * answers, so that a ratio shows what the library costs. argv[2] is
 *   - "node-list": bare node:http; checks the bearer header, answers the same pets as a
 *     pre-serialised string with the same response headers (BENCH_REFERENCE, taken from ours);
 *   - "hapi-list": the same from a bare hapi route;
 *   - "fastify-list": the same from a bare Fastify route;
 *   - "node-create": bare node:http; checks the bearer header, reads the body, JSON.parses it,
 *     assigns an id and answers 201 with the pet and the same headers as ours.
 * Every answer gets a fresh x-request-id, as ours does.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import Hapi from "@hapi/hapi";
import Fastify from "fastify";
import { exitWithParent, tellParent } from "../child.ts";

const mode = process.argv[2];
const authorization = `Bearer ${process.env.BENCH_KEY ?? "bench-key"}`;
const JSON_TYPE = "application/json; charset=utf-8";
const UNAUTHORIZED = JSON.stringify({
  code: "unauthorized",
  message: "A valid API key is required. Send the key as Authorization: Bearer <key>.",
  status: 401,
});

/** The answer to copy: status, headers (without date, connection and x-request-id) and body. */
interface Reference {
  path: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

function reference(): Reference {
  const raw = process.env.BENCH_REFERENCE;
  if (raw === undefined) throw new Error(`baseline ${mode} needs BENCH_REFERENCE`);
  return JSON.parse(raw) as Reference;
}

function refuse(res: ServerResponse): void {
  res.writeHead(401, { "content-type": JSON_TYPE, "www-authenticate": 'Bearer realm="petstore"' });
  res.end(UNAUTHORIZED);
}

function listen(server: ReturnType<typeof createServer>): void {
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    exitWithParent(() => new Promise<void>((resolve) => server.close(() => resolve())));
    tellParent({ type: "ready", port: typeof address === "object" && address ? address.port : 0 });
  });
  // Node's own keep-alive default (5 s) matches the standalone server's.
}

if (mode === "node-list") {
  const ref = reference();
  listen(
    createServer((req, res) => {
      if (req.headers.authorization !== authorization) return refuse(res);
      if (req.method !== "GET" || req.url !== ref.path) {
        res.writeHead(404, { "content-type": JSON_TYPE }).end("{}");
        return;
      }
      res.writeHead(ref.status, { ...ref.headers, "x-request-id": randomUUID() });
      res.end(ref.body);
    }),
  );
} else if (mode === "node-create") {
  let lastId = 0;
  listen(
    createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.headers.authorization !== authorization) return refuse(res);
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        let input: { name: string; categoryId: number; status?: string };
        try {
          input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          res.writeHead(400, { "content-type": JSON_TYPE }).end("{}");
          return;
        }
        const id = ++lastId;
        const body = JSON.stringify({
          id,
          name: input.name,
          categoryId: input.categoryId,
          status: input.status ?? "available",
        });
        res.writeHead(201, {
          "content-type": JSON_TYPE,
          "cache-control": "no-store",
          "x-request-id": randomUUID(),
          "content-length": String(Buffer.byteLength(body)),
          "x-content-type-options": "nosniff",
          location: `/v1/pets/${id}`,
        });
        res.end(body);
      });
    }),
  );
} else if (mode === "hapi-list") {
  const ref = reference();
  const server = Hapi.server({ port: 0, host: "127.0.0.1" });
  const [path, query] = ref.path.split("?");
  server.route({
    method: "GET",
    path: path as string,
    options: { response: { ranges: false } }, // as the plugin's routes: the same headers
    handler(request, h) {
      if (request.headers.authorization !== authorization) {
        return h.response(UNAUTHORIZED).code(401).type(JSON_TYPE);
      }
      if (request.url.search !== `?${query}`) return h.response("{}").code(404);
      const response = h.response(ref.body).code(ref.status);
      for (const name in ref.headers) response.header(name, ref.headers[name] as string);
      return response.header("x-request-id", randomUUID());
    },
  });
  await server.start();
  exitWithParent(() => server.stop({ timeout: 1000 }));
  tellParent({ type: "ready", port: Number(server.info.port) });
} else if (mode === "fastify-list") {
  const ref = reference();
  const app = Fastify();
  app.get(ref.path.split("?")[0] as string, (request, reply) => {
    if (request.headers.authorization !== authorization) {
      reply.code(401).header("content-type", JSON_TYPE).send(UNAUTHORIZED);
      return;
    }
    if (request.url !== ref.path) {
      reply.code(404).send("{}");
      return;
    }
    reply.code(ref.status).headers(ref.headers).header("x-request-id", randomUUID()).send(ref.body);
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  exitWithParent(() => app.close());
  tellParent({ type: "ready", port: (app.server.address() as { port: number }).port });
} else {
  throw new Error(`bench/servers/baseline.ts: unknown mode ${JSON.stringify(mode)}`);
}
