/**
 * The conformance cases of validators, caching and compression (contract 1.4): strong ETags on
 * pets and pages and their HEADs, `If-None-Match` (a list, `*`, weak comparison) answering `304`
 * with what RFC 9110 §15.4.5 keeps, never for another or a changed answer; `Cache-Control: private`;
 * and, on a target that compresses (its own or its host's compression), answers that decode to the
 * plain one, say `Vary: Accept-Encoding` and carry a tag of their own.
 */
import { assert } from "./assert.ts";
import type { Case } from "./case-kit.ts";
import { auth, deprecation, expectError, expectHeaders, get } from "./case-kit.ts";
import type { Answer, Client } from "./client.ts";
import { STRONG_TAG } from "./client.ts";

/** A GET with the key and `headers`. */
const getWith = (c: Client, path: string, headers: Record<string, string>) => get(c, path, { ...auth(c), ...headers });

/** A tag as weak comparison sees it: without `W/`. */
const opaque = (etag: string | undefined) => etag?.replace(/^W\//, "");

/** The names listed by a `Vary` header, lower case, each once (a host may list one again), sorted. */
const varied = (answer: Answer) => [
  ...new Set(
    (answer.headers.vary ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== "")
      .sort(),
  ),
];

/** Asserts a 304 that confirms `first` (a 200 to the same request). */
function expectNotModified(answer: Answer, first: Answer): void {
  assert.equal(answer.status, 304, `status (body ${answer.body})`);
  assert.equal(answer.body, "");
  assert.equal(opaque(answer.headers.etag), opaque(first.headers.etag), "the 304 names the answer the client holds");
  assert.equal(answer.headers["cache-control"], first.headers["cache-control"], "the 200's Cache-Control");
  assert.deepEqual(varied(answer), varied(first), "the 200's Vary");
}

export const CACHING_CASES: Case[] = [
  {
    name: "validators: a pet, a page and their HEADs carry a strong ETag (HEAD's is GET's), each answer its own",
    async run(c) {
      await c.seed(3);
      for (const path of ["/pets", "/pets/2", "/pets?limit=2"]) {
        const answer = await c.send(get(c, path));
        assert.match(answer.headers.etag ?? "", STRONG_TAG, path);
        const head = await c.send({ ...get(c, path), method: "HEAD" });
        assert.equal(head.headers.etag, answer.headers.etag, `HEAD ${path}`);
      }
      const pets = (await c.send(get(c, "/pets"))).headers.etag;
      const page = (await c.send(get(c, "/pets?limit=2"))).headers.etag;
      const pet = (await c.send(get(c, "/pets/2"))).headers.etag;
      assert.equal(new Set([pets, page, pet]).size, 3, "each answer its own tag");
    },
  },
  {
    name: "validators: If-None-Match with a pet's ETag answers 304, no body, its ETag, Cache-Control and deprecation headers",
    async run(c) {
      await c.seed(2);
      const first = await c.send(get(c, "/pets/2"));
      const again = await c.send(getWith(c, "/pets/2", { "if-none-match": first.headers.etag ?? "" }));
      expectNotModified(again, first);
      expectHeaders(again, deprecation(c));
    },
  },
  {
    name: "validators: If-None-Match with a page's ETag answers 304, as a list member, as W/ (weak comparison) or as *",
    async run(c) {
      await c.seed(3);
      const first = await c.send(get(c, "/pets?limit=2"));
      const tag = first.headers.etag ?? "";
      for (const held of [tag, `"other", ${tag}`, `W/${tag}`, `W/"other", W/${tag}`, "*"]) {
        expectNotModified(await c.send(getWith(c, "/pets?limit=2", { "if-none-match": held })), first);
      }
    },
  },
  {
    name: "validators: HEAD with a matching If-None-Match answers 304 as GET does",
    async run(c) {
      await c.seed(1);
      for (const path of ["/pets", "/pets/1"]) {
        const first = await c.send(get(c, path));
        const head = await c.send({
          ...getWith(c, path, { "if-none-match": first.headers.etag ?? "" }),
          method: "HEAD",
        });
        expectNotModified(head, first);
      }
    },
  },
  {
    name: "validators: no 304 for another tag, another pet's, another page's, or the last page once a pet was added",
    async run(c) {
      await c.seed(2);
      const pet1 = await c.send(get(c, "/pets/1"));
      const last = await c.send(get(c, "/pets"));
      const page = (await c.send(get(c, "/pets?limit=1"))).headers.etag ?? "";
      for (const held of ['"not-a-tag"', pet1.headers.etag ?? "", page]) {
        const answer = await c.send(getWith(c, "/pets/2", { "if-none-match": held }));
        assert.equal(answer.status, 200, held);
        assert.equal(JSON.parse(answer.body).id, 2);
      }
      assert.equal((await c.send(getWith(c, "/pets", { "if-none-match": pet1.headers.etag ?? "" }))).status, 200);
      await c.seed(1);
      const changed = await c.send(getWith(c, "/pets", { "if-none-match": last.headers.etag ?? "" }));
      assert.equal(changed.status, 200, "the last page filled: a new answer");
      assert.equal(JSON.parse(changed.body).length, 3);
      assert.notEqual(changed.headers.etag, last.headers.etag);
      // A full page (another follows) still holds the same pets and Link: its tag holds.
      const full = await c.send(get(c, "/pets?limit=1"));
      await c.seed(1);
      expectNotModified(await c.send(getWith(c, "/pets?limit=1", { "if-none-match": full.headers.etag ?? "" })), full);
    },
  },
  {
    name: "validators: an error never answers 304 (If-None-Match: * on a missing pet is 404, without a key 401)",
    async run(c) {
      expectError(await c.send(getWith(c, "/pets/999999", { "if-none-match": "*" })), 404, "pet_not_found");
      expectError(await c.send(get(c, "/pets", { "if-none-match": "*" })), 401, "unauthorized");
    },
  },
  {
    name: "caching: a caller's pet, page and create are Cache-Control: private, no-cache (kept only by its browser, revalidated); errors no-store",
    async run(c) {
      await c.seed(1);
      for (const path of ["/pets", "/pets/1"]) {
        expectHeaders(await c.send(get(c, path)), { "cache-control": "private, no-cache" });
      }
      const created = await c.send({
        method: "POST",
        path: `${c.base}/pets`,
        headers: { ...auth(c), "content-type": "application/json" },
        body: '{"name":"Rex","categoryId":1}',
      });
      expectHeaders(created, { "cache-control": "private, no-cache" });
      expectHeaders(await c.send(get(c, "/pets/999999")), { "cache-control": "no-store" });
      expectHeaders(await c.send(get(c, "/pets", {})), { "cache-control": "no-store" });
    },
  },
  {
    name: "caching: a 304 carries the Vary its 200 carries (Origin for an allowed page's request)",
    async run(c) {
      await c.seed(2);
      const origin: Record<string, string> = c.corsOrigin === undefined ? {} : { origin: c.corsOrigin };
      for (const path of ["/pets", "/pets/1"]) {
        const first = await c.send(getWith(c, path, origin));
        const again = await c.send(getWith(c, path, { ...origin, "if-none-match": first.headers.etag ?? "" }));
        expectNotModified(again, first);
        if (c.corsOrigin !== undefined) assert.ok(varied(again).includes("origin"), "Vary: Origin");
      }
    },
  },
  {
    name: "compression: a page of 100 pets asked in zstd, br or gzip decodes to the plain one; coded, it says Vary: Accept-Encoding and has an ETag of its own (or the plain one weakened), which answers 304",
    async run(c) {
      await c.seed(100);
      const plain = await c.send(get(c, "/pets?limit=100"));
      for (const coding of ["zstd", "br", "gzip"]) {
        const accept = { "accept-encoding": coding };
        const coded = await c.send(getWith(c, "/pets?limit=100", accept));
        assert.equal(coded.status, 200);
        assert.equal(coded.body, plain.body, `${coding}: decodes to the plain page`);
        const used = coded.headers["content-encoding"];
        if (used === undefined) {
          // The target (or its host) sent it plain: the plain answer's tag, then.
          assert.equal(coded.headers.etag, plain.headers.etag, `${coding}, not coded: the plain tag`);
        } else {
          assert.equal(used, coding, "only the coding the client accepts");
          assert.ok(varied(coded).includes("accept-encoding"), `${coding}: Vary: Accept-Encoding`);
          // A tag of its own, or the plain one weakened (W/: a host that compresses may say "equivalent" so).
          assert.notEqual(coded.headers.etag, plain.headers.etag, `${coding}: not the plain answer's strong tag`);
        }
        const again = await c.send(
          getWith(c, "/pets?limit=100", { ...accept, "if-none-match": coded.headers.etag ?? "" }),
        );
        expectNotModified(again, coded);
      }
      const plainAgain = await c.send(getWith(c, "/pets?limit=100", { "if-none-match": plain.headers.etag ?? "" }));
      expectNotModified(plainAgain, plain);
    },
  },
];
