/**
 * Generators of hostile requests for the fuzz suites, as small descriptions (so that a failing
 * case prints readably: a 100,000-level body is `{ kind: "deep", levels: 100000 }`, not 200 KB of
 * brackets) and the two ways to send one: as a `handle()` request, or as raw bytes on a socket.
 */
import fc from "fast-check";
import type { BodyReader } from "../../lib/adapter.ts";
import { encodeCursor } from "../../lib/cursor.ts";
import { PetStoreError } from "../../lib/errors.ts";
import type { PetStoreRequest } from "../../lib/index.ts";

export const FUZZ_KEY = "fuzz-key-7f3a9c0e5b1d4e2a";
/** The seed of every fuzz run: FUZZ_SEED, or a fixed default so that CI runs are reproducible. */
export const FUZZ_SEED = process.env.FUZZ_SEED === undefined ? 20261125 : Number(process.env.FUZZ_SEED);
if (!Number.isSafeInteger(FUZZ_SEED)) throw new Error(`FUZZ_SEED must be an integer (got ${process.env.FUZZ_SEED})`);

export type BodyDesc =
  | { kind: "none" }
  | { kind: "json"; value: unknown }
  | { kind: "text"; text: string }
  | { kind: "bytes"; bytes: number[] }
  /** `levels` opening brackets (or `{"a":`), then as many closing ones. */
  | { kind: "deep"; levels: number; open: "[" | '{"a":' }
  /** A NewPet whose name is `length` characters long. */
  | { kind: "long"; length: number };

export type HeaderPair = [name: string, value: string | string[]];

export interface FuzzCase {
  method: string;
  /** The path only; `query` is sent after a "?" when not null. */
  path: string;
  query: string | null;
  headers: HeaderPair[];
  body: BodyDesc;
  /** How handle() receives the body: bytes, text, or a BodyReader as the adapters pass it. */
  bodyAs: "bytes" | "string" | "reader";
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const enc = new TextEncoder();

// ---- bodies ---------------------------------------------------------------------------------

const statusValue = fc.constantFrom("available", "pending", "sold");

const validNewPet = fc
  .record(
    {
      name: fc.string({ minLength: 1, maxLength: 30, unit: "grapheme" }).filter((s) => s.trim() !== ""),
      categoryId: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(1, MAX_SAFE)),
      status: statusValue,
    },
    { requiredKeys: ["name", "categoryId"] },
  )
  .map((p) => ({ ...p }));

const hostileValue = fc.oneof(
  fc.constantFrom(0, -1, 1.5, "5", MAX_SAFE + 1, 2 ** 63, -0, 1e308, null, true, [], {}, "", "   ", "SOLD"),
  fc.string({ maxLength: 5, unit: "binary" }),
);

/** A NewPet with one field broken, one unknown field, or a prototype-pollution key. */
const nearlyValidNewPet = fc
  .tuple(
    validNewPet,
    fc.constantFrom("name", "categoryId", "status", "id", "__proto__", "constructor", "prototype", "extra"),
    hostileValue,
  )
  .map(([pet, field, value]) => {
    // JSON.parse (not an object literal) makes "__proto__" an own key, as a client's body does.
    const json = JSON.stringify(pet).slice(0, -1);
    return { kind: "text", text: `${json},${JSON.stringify(field)}:${JSON.stringify(value) ?? "null"}}` } as const;
  });

const HOSTILE_TEXTS = [
  "",
  " ",
  "{",
  "nul",
  "[1,]",
  "\uFEFF{}",
  "1e99999",
  "-",
  "null",
  "[]",
  '"a string"',
  '{"name":"a","categoryId":1e400}',
  '{"name":"a","categoryId":123456789012345678901234567890}',
  '{"name":"a","categoryId":9007199254740993}',
  '{"name":"a","categoryId":-9007199254740993}',
  '{"name":"a","categoryId":1.0000000000000002}',
  '{"name":"a","name":"b","categoryId":2}',
  '{"__proto__":{"polluted":"yes"},"name":"a","categoryId":1}',
  '{"name":"a","categoryId":1,"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}},"name":"a","categoryId":1}',
  '{"name":{"toString":"x"},"categoryId":1}',
  '{"name":"a","categoryId":1} trailing',
  '{"name":"\\ud800","categoryId":1}',
  '{"name":"\\u0000","categoryId":1}',
  '{"name":"a","categoryId":1,"status":null}',
  '{"name":"a","categoryId":"1"}',
  '{"name":"a","categoryId":1,"status":"available","id":7}',
];

const INVALID_UTF8: number[][] = [
  [0xff, 0xfe],
  [0xc3, 0x28],
  [0xc0, 0xaf],
  [0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d], // {"name":"<CESU surrogate>"}
  [...enc.encode('{"name":"'), 0xf8, 0x88, 0x80, 0x80, 0x80, ...enc.encode('","categoryId":1}')],
  [...enc.encode('{"name":"ok","categoryId":1}'), 0x80],
];

export const bodyArb: fc.Arbitrary<BodyDesc> = fc.oneof(
  { weight: 30, arbitrary: validNewPet.map((value) => ({ kind: "json", value }) as const) },
  { weight: 12, arbitrary: nearlyValidNewPet },
  { weight: 8, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value) => ({ kind: "json", value }) as const) },
  { weight: 8, arbitrary: fc.constantFrom(...HOSTILE_TEXTS).map((text) => ({ kind: "text", text }) as const) },
  {
    weight: 3,
    arbitrary: fc.string({ maxLength: 40, unit: "binary" }).map((text) => ({ kind: "text", text }) as const),
  },
  { weight: 4, arbitrary: fc.constantFrom(...INVALID_UTF8).map((bytes) => ({ kind: "bytes", bytes }) as const) },
  {
    weight: 2,
    arbitrary: fc
      .array(fc.integer({ min: 0, max: 255 }), { maxLength: 40 })
      .map((bytes) => ({ kind: "bytes", bytes }) as const),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        levels: fc.constantFrom(100_000, 10_000, 1_000),
        open: fc.constantFrom("[" as const, '{"a":' as const),
      })
      .map((d) => ({ kind: "deep", ...d }) as const),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(200, 201, 10_000, 70_000).map((length) => ({ kind: "long", length }) as const),
  },
  { weight: 8, arbitrary: fc.constant({ kind: "none" } as const) },
);

/** The bytes a body description stands for (undefined: no body at all). */
export function bodyBytes(body: BodyDesc): Uint8Array | undefined {
  switch (body.kind) {
    case "none":
      return undefined;
    case "json":
      return enc.encode(JSON.stringify(body.value) ?? "null");
    case "text":
      return enc.encode(body.text);
    case "bytes":
      return Uint8Array.from(body.bytes);
    case "deep": {
      const close = body.open === "[" ? "]" : "}";
      return enc.encode(`${body.open.repeat(body.levels)}1${close.repeat(body.levels)}`);
    }
    case "long":
      return enc.encode(JSON.stringify({ name: "n".repeat(body.length), categoryId: 1 }));
  }
}

// ---- methods, paths, queries --------------------------------------------------------------

export const methodArb = fc.oneof(
  { weight: 40, arbitrary: fc.constantFrom("GET", "POST", "HEAD") },
  { weight: 8, arbitrary: fc.constantFrom("PUT", "DELETE", "PATCH", "OPTIONS", "TRACE") },
  { weight: 3, arbitrary: fc.constantFrom("get", "post", "Head", "PROPFIND", "SEARCH", "POSTX", "G E T", "") },
  { weight: 1, arbitrary: fc.string({ maxLength: 8, unit: "binary" }) },
);

const HOSTILE_IDS = [
  "0",
  "-1",
  "01",
  "1.0",
  "1e3",
  "0x1f",
  "9007199254740991",
  "9007199254740992",
  "99999999999999999999",
  "%31",
  "%2F1",
  "1%00",
  "%20",
  "%",
  "%E0%A4%A",
  "１",
  "NaN",
  "Infinity",
  "__proto__",
  "constructor",
  "toString",
  "9".repeat(1000),
];

const HOSTILE_PATHS = [
  "/v1/openapi.json",
  "/v1/__proto__",
  "/v1/constructor",
  "/v1/toString",
  "/v1/hasOwnProperty",
  "/v1/pets/",
  "/v1/pets//1",
  "/v1/pets/1/",
  "/v1/./pets",
  "/v1/pets/../pets",
  "/v1/%70ets",
  "//v1/pets",
  "/V1/pets",
  "/v1",
  "/v1/",
  "/",
  "*",
  "",
  "/healthz",
  "/v1/pets;jsessionid=1",
  `/v1/${"a".repeat(3000)}`,
];

export const pathArb = fc.oneof(
  { weight: 40, arbitrary: fc.constant("/v1/pets") },
  { weight: 25, arbitrary: fc.integer({ min: 1, max: 60 }).map((id) => `/v1/pets/${id}`) },
  { weight: 8, arbitrary: fc.constantFrom(...HOSTILE_IDS).map((id) => `/v1/pets/${id}`) },
  { weight: 8, arbitrary: fc.constantFrom(...HOSTILE_PATHS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 20, unit: "binary" }).map((s) => `/${s}`) },
);

const cursorArb = fc.oneof(
  fc
    .tuple(fc.integer({ min: 1, max: 80 }), fc.option(statusValue, { nil: undefined }))
    .map(([id, status]) => encodeCursor(id, status)),
  fc.constantFrom("", "abc", "a1", "v10000000", "x".repeat(10_000), "a%00", "__proto__"),
  fc.string({ maxLength: 12 }),
);

const limitArb = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 1, max: 100 }).map(String) },
  {
    weight: 3,
    arbitrary: fc.constantFrom("0", "101", "1.5", "abc", "", "-1", "1e2", "０", "100 ", " 1", "%31", "0100"),
  },
);

const paramArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: limitArb.map((v) => `limit=${v}`) },
  {
    weight: 5,
    arbitrary: fc
      .constantFrom("available", "pending", "sold", "SOLD", "", "availabl", "sold%00")
      .map((s) => `status=${s}`),
  },
  { weight: 4, arbitrary: cursorArb.map((c) => `cursor=${c}`) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "__proto__=x",
      "__proto__[polluted]=yes",
      "constructor[prototype][polluted]=yes",
      "%",
      "%zz=1",
      "limit",
      "&&&",
      "api_key=fuzz-key-7f3a9c0e5b1d4e2a",
      "access_token=fuzz-key-7f3a9c0e5b1d4e2a",
      "a=b;c=d",
      "limit=%ZZ",
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12, unit: "binary" }) },
);

export const queryArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant(null) },
  { weight: 6, arbitrary: fc.array(paramArb, { minLength: 0, maxLength: 4 }).map((ps) => ps.join("&")) },
);

// ---- headers --------------------------------------------------------------------------------

export const authArb: fc.Arbitrary<string | string[] | undefined> = fc.oneof(
  { weight: 60, arbitrary: fc.constant(`Bearer ${FUZZ_KEY}`) },
  {
    weight: 20,
    arbitrary: fc.constantFrom(
      `bearer ${FUZZ_KEY}`,
      `BEARER ${FUZZ_KEY}`,
      `Bearer  ${FUZZ_KEY}`,
      `Bearer ${FUZZ_KEY} `,
      `Bearer\t${FUZZ_KEY}`,
      `Bearer ${FUZZ_KEY}x`,
      `Bearer ${FUZZ_KEY.slice(0, -1)}`,
      `Bearer ${FUZZ_KEY.toUpperCase()}`,
      "Bearer",
      "Bearer ",
      "",
      `Basic ${Buffer.from(`user:${FUZZ_KEY}`).toString("base64")}`,
      `Token ${FUZZ_KEY}`,
      FUZZ_KEY,
      `Bearer ${"x".repeat(10_240)}`,
      `Bearer ${FUZZ_KEY},Bearer ${FUZZ_KEY}`,
    ),
  },
  { weight: 3, arbitrary: fc.constant<string[]>([`Bearer ${FUZZ_KEY}`, `Bearer ${FUZZ_KEY}`]) },
  { weight: 3, arbitrary: fc.string({ maxLength: 30, unit: "binary" }).map((s) => `Bearer ${s}`) },
  { weight: 10, arbitrary: fc.constant(undefined) },
);

const contentTypeArb: fc.Arbitrary<string | string[] | undefined> = fc.oneof(
  { weight: 30, arbitrary: fc.constantFrom("application/json", "application/json; charset=utf-8") },
  {
    weight: 10,
    arbitrary: fc.constantFrom(
      "APPLICATION/JSON",
      " application/json ",
      "application/json;charset=latin1",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonx",
      "application/json-patch+json",
      "",
      "json",
    ),
  },
  { weight: 1, arbitrary: fc.constant<string[]>(["application/json", "text/plain"]) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20, unit: "binary" }) },
  { weight: 6, arbitrary: fc.constant(undefined) },
);

/** "true" stands for the body's real length; everything else is sent as written (a lie or junk). */
const contentLengthArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 20, arbitrary: fc.constant("true") },
  { weight: 6, arbitrary: fc.constant(undefined) },
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      "0",
      "1",
      "10",
      "65536",
      "65537",
      "99999999999",
      "10737418240",
      "-1",
      "abc",
      "1e3",
      "0x10",
    ),
  },
);

export const requestIdArb: fc.Arbitrary<string | string[] | undefined> = fc.oneof(
  { weight: 10, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: fc.stringMatching(/^[A-Za-z0-9._-]{1,128}$/) },
  {
    weight: 3,
    arbitrary: fc.constantFrom("x".repeat(129), "", "a b", "<script>", "ä", "../../etc/passwd", "__proto__", "a\tb"),
  },
  { weight: 1, arbitrary: fc.constant<string[]>(["one", "two"]) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20, unit: "binary" }) },
);

/** Idempotency keys from a small pool (so that they repeat, with the same or other bodies), and malformed ones. */
const KEY_POOL = ["k0", "k1", "k2", "k3", "8e03978e-40d5-43e8-bc93-6894a57f9324", "~!#$%&'()*+,-./:;<=>?@[]^_`{|}"];
const poolKeyArb = fc.constantFrom(...KEY_POOL).chain((k) => fc.constantFrom(k, `"${k}"`, ` ${k} `));
export const idempotencyKeyArb: fc.Arbitrary<string | string[] | undefined> = fc.oneof(
  { weight: 20, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: poolKeyArb },
  { weight: 2, arbitrary: fc.stringMatching(/^[!#-[\]-~]{1,255}$/) },
  {
    weight: 3,
    arbitrary: fc.constantFrom("", '""', "a b", 'a"b', "a\\b", "x".repeat(256), "clé", "a, b", '"k0', "\tk0\t\t"),
  },
  { weight: 1, arbitrary: fc.constant<string[]>(["k0", "k0"]) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20, unit: "binary" }) },
);

const extraHeaderArb: fc.Arbitrary<HeaderPair> = fc.constantFrom<HeaderPair>(
  ["__proto__", "polluted"],
  ["constructor", "polluted"],
  ["x-forwarded-for", "127.0.0.1"],
  ["transfer-encoding", "chunked"],
  ["expect", "100-continue"],
  ["accept", "*/*"],
  ["x-http-method-override", "DELETE"],
  ["cookie", "a=b"],
);

export const headersArb: fc.Arbitrary<HeaderPair[]> = fc
  .record({
    authorization: authArb,
    "content-type": contentTypeArb,
    "content-length": contentLengthArb,
    "x-request-id": requestIdArb,
    "idempotency-key": idempotencyKeyArb,
    extra: fc.array(extraHeaderArb, { maxLength: 2 }),
  })
  .map(({ extra, ...named }) => {
    const pairs: HeaderPair[] = [];
    for (const [name, value] of Object.entries(named)) if (value !== undefined) pairs.push([name, value]);
    return [...pairs, ...extra];
  });

const bodyAsArb = fc.constantFrom("bytes" as const, "string" as const, "reader" as const);

/** Anything goes: every part drawn from the hostile generators. */
const anyCaseArb: fc.Arbitrary<FuzzCase> = fc.record({
  method: methodArb,
  path: pathArb,
  query: queryArb,
  headers: headersArb,
  body: bodyArb,
  bodyAs: bodyAsArb,
});

/** A well-formed createPet, so that the store fills up and reads and walks have pets to show. */
const createCaseArb: fc.Arbitrary<FuzzCase> = fc.record({
  method: fc.constant("POST"),
  path: fc.constant("/v1/pets"),
  query: fc.constant(null),
  headers: fc.record({ id: requestIdArb, key: idempotencyKeyArb }).map(({ id, key }) => {
    const pairs: HeaderPair[] = [
      ["authorization", `Bearer ${FUZZ_KEY}`],
      ["content-type", "application/json"],
      ["content-length", "true"],
    ];
    if (id !== undefined) pairs.push(["x-request-id", id]);
    if (key !== undefined) pairs.push(["idempotency-key", key]);
    return pairs;
  }),
  body: fc.oneof(
    { weight: 4, arbitrary: validNewPet.map((value) => ({ kind: "json", value }) as const) },
    { weight: 1, arbitrary: nearlyValidNewPet },
    // The same few pets again and again: with a pool key they replay (or meet another body: 422).
    {
      weight: 3,
      arbitrary: fc
        .record({ n: fc.integer({ min: 0, max: 3 }), order: fc.boolean(), status: fc.boolean() })
        .map(({ n, order, status }) => {
          const value: Record<string, unknown> = order
            ? { name: `same ${n}`, categoryId: n + 1 }
            : { categoryId: n + 1, name: `same ${n}` };
          if (status) value.status = "available";
          return { kind: "json", value } as const;
        }),
    },
  ),
  bodyAs: bodyAsArb,
});

/** A request mixing the two. */
export const caseArb: fc.Arbitrary<FuzzCase> = fc.oneof(
  { weight: 7, arbitrary: anyCaseArb },
  { weight: 3, arbitrary: createCaseArb },
);

// ---- as a handle() request ------------------------------------------------------------------

/** The header value a case sends, with "true" Content-Length replaced by the body's length. */
export function headerValue(value: string | string[], name: string, body: Uint8Array | undefined) {
  if (name === "content-length" && value === "true") return String(body?.byteLength ?? 0);
  return value;
}

/** The case as handle() receives it from an adapter: lower-case header names, a body reader. */
export function toHandleRequest(c: FuzzCase): PetStoreRequest {
  const bytes = bodyBytes(c.body);
  // defineProperty makes "__proto__" an own header, as a parsed header block would.
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of c.headers) {
    Object.defineProperty(headers, name, {
      value: headerValue(value, name, bytes),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  let body: PetStoreRequest["body"];
  if (bytes === undefined) body = undefined;
  else if (c.bodyAs === "bytes") body = bytes;
  else if (c.bodyAs === "string") body = Buffer.from(bytes).toString("utf8");
  else {
    const reader: BodyReader = async (limit) => {
      if (bytes.byteLength > limit) throw new PetStoreError("payload_too_large");
      return bytes;
    };
    body = reader;
  }
  const request: PetStoreRequest = { method: c.method, path: c.path, headers, body };
  if (c.query !== null) request.query = c.query;
  return request;
}
