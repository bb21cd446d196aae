/**
 * What every fuzzed answer must satisfy, written from the contract (not from the handler's
 * code): a status of the contract's table, a valid Error body, the headers every answer
 * carries, the order of checks (route, then key, then content, then the operation), and a
 * ledger of the pets acknowledged with 201 that later reads and the final walk must match.
 */
import * as v from "valibot";
import type { PetStorage } from "../../lib/entries/storage.ts";
import { ERRORS } from "../../lib/errors.ts";
import { ErrorSchema, NewPet, PET_STATUSES, Pet } from "../../lib/schemas.ts";

/** An answer as both transports see it: lower-case header names, the body as text. */
export interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

export type StorageMode = "up" | "down" | "hang";

/** The request as the server saw it, for the oracle. */
export interface Sent {
  method: string;
  path: string;
  query: string;
  authorization: string | string[] | undefined;
  requestId: string | string[] | undefined;
  contentType: string | string[] | undefined;
  contentLength: string | string[] | undefined;
  /** The body bytes the handler could read, or undefined when none. */
  body: Uint8Array | undefined;
  /** False when the body was handed over as (already decoded) text. */
  bodyIsBytes: boolean;
  storage: StorageMode;
  maxBodyBytes: number;
  key: string;
  /** Over a socket some things are Node's to decide (duplicate headers, body framing). */
  exactPost: boolean;
  /** The Idempotency-Key header as the server saw it. */
  idempotencyKey?: string | string[] | undefined;
}

/** A marker that a failing storage puts in its errors: it must never reach a response. */
export const SENTINEL = "SENTINEL-internal-detail-at-/srv/secret/db.js:42";
const STACK = /\n\s+at |\bat [^ ]+ \(|node:internal|node_modules/;
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });
const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** The pets acknowledged with 201, by id. */
export type Ledger = Map<number, v.InferOutput<typeof Pet>>;

/** The keys acknowledged with a created pet, per ledger (one store): key → canonical NewPet and pet. */
const keyLedgers = new WeakMap<Ledger, Map<string, { fingerprint: string; pet: string }>>();
function keysOf(ledger: Ledger) {
  let keys = keyLedgers.get(ledger);
  if (keys === undefined) {
    keys = new Map();
    keyLedgers.set(ledger, keys);
  }
  return keys;
}

const INVALID = Symbol("invalid key");

/** The contract's Idempotency-Key rule: a quoted or bare run of 1 to 255 of `!`..`~` except `"` and `\`; given once. */
function idempotencyKeyOf(value: string | string[] | undefined): string | undefined | typeof INVALID {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return INVALID;
  let key = value.replace(/^[ \t]+|[ \t]+$/g, "");
  if (/^".*"$/.test(key) && key.length >= 2) key = key.slice(1, -1);
  return /^[!#-[\]-~]{1,255}$/.test(key) ? key : INVALID;
}

/**
 * The order in which the answers of one concurrent batch are checked: creations of new pets
 * first, then replays, then the other creates, then the rest, so that the ledger already holds
 * what a concurrent answer may show or refer to.
 */
export function checkRank(sent: Sent, answer: Answer): number {
  if (sent.method.toUpperCase() !== "POST") return 3;
  if (answer.status !== 201) return 2;
  return answer.headers["idempotent-replayed"] === undefined ? 0 : 1;
}

/** A storage that can be switched down (every call rejects) or hung (no call answers). */
export function switchableStorage(inner: PetStorage): { storage: PetStorage; set(mode: StorageMode): void } {
  let mode: StorageMode = "up";
  const gate = <T>(call: () => T | Promise<T>): Promise<T> => {
    if (mode === "down") return Promise.reject(new Error(`ECONNREFUSED ${SENTINEL}`));
    if (mode === "hang") return new Promise<T>(() => {});
    return Promise.resolve(call());
  };
  return {
    storage: {
      kind: "switchable",
      create: (pet) => gate(() => inner.create(pet)),
      createOnce: (pet, record) => gate(() => (inner.createOnce as NonNullable<PetStorage["createOnce"]>)(pet, record)),
      get: (id) => gate(() => inner.get(id)),
      list: (page) => gate(() => inner.list(page)),
      ping: () => gate(() => inner.ping()),
      close: () => inner.close(),
    },
    set(next) {
      mode = next;
    },
  };
}

function fail(message: string, sent: Sent, answer: Answer): never {
  const shown = { ...sent, body: sent.body === undefined ? undefined : `${sent.body.byteLength} bytes` };
  throw new Error(
    `${message}\n  request: ${JSON.stringify(shown).slice(0, 600)}\n  answer: ${answer.status} ${JSON.stringify(answer.headers)} ${answer.body.slice(0, 300)}`,
  );
}

/**
 * True when Authorization was given more than once: several values, or one value holding a comma
 * beside a Bearer part (a bearer token never holds a comma, so two headers were joined).
 */
function repeatedAuthorization(authorization: string | string[] | undefined): boolean {
  if (Array.isArray(authorization)) return authorization.length > 1;
  if (authorization === undefined || !authorization.includes(",")) return false;
  return authorization.split(",").some((part) => /^bearer +\S/i.test(part.trim()));
}

function validKey(authorization: string | string[] | undefined, key: string): boolean {
  if (Array.isArray(authorization) && authorization.length === 1) return validKey(authorization[0], key);
  if (typeof authorization !== "string") return false;
  const m = /^bearer (.*)$/is.exec(authorization);
  return m !== null && (m[1] as string).trim() === key;
}

type Outcome = { status: number; code?: string };

/** What the contract says POST /v1/pets answers once the key is good. */
function expectedCreate(sent: Sent): Outcome & { pet?: v.InferOutput<typeof NewPet> } {
  const [media, ...parameters] = first(sent.contentType)?.split(";") ?? [];
  if (media?.trim().toLowerCase() !== "application/json") return { status: 415, code: "unsupported_media_type" };
  for (const parameter of parameters) {
    const [name, value = ""] = parameter.split("=", 2).map((part) => part.trim().toLowerCase());
    if (name === "charset" && value.replace(/^"(.*)"$/, "$1") !== "utf-8") {
      return { status: 415, code: "unsupported_media_type" };
    }
  }
  const declared = first(sent.contentLength);
  if (declared !== undefined && /^[0-9]+$/.test(declared) && Number(declared) > sent.maxBodyBytes) {
    return { status: 413, code: "payload_too_large" };
  }
  const bytes = sent.body ?? new Uint8Array(0);
  if (bytes.byteLength > sent.maxBodyBytes) return { status: 413, code: "payload_too_large" };
  let text: string;
  try {
    text = sent.bodyIsBytes ? utf8.decode(bytes) : Buffer.from(bytes).toString("utf8");
  } catch {
    return { status: 400, code: "malformed_json" };
  }
  if (text.trim() === "") return { status: 400, code: "invalid_body" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { status: 400, code: "malformed_json" };
  }
  if (repeatsMember(text)) return { status: 400, code: "malformed_json" };
  const parsed = v.safeParse(NewPet, value);
  if (!parsed.success) return { status: 400, code: "invalid_body" };
  if (sent.storage !== "up") return { status: 503, code: "storage_unavailable" };
  return { status: 201, pet: parsed.output };
}

function checkPets(value: unknown, ledger: Ledger, sent: Sent, answer: Answer): v.InferOutput<typeof Pet>[] {
  const pets = Array.isArray(value) ? value : [value];
  for (const pet of pets) {
    if (!v.is(Pet, pet)) fail("a 200 answer holds something that is not a Pet", sent, answer);
    const known = ledger.get(pet.id);
    if (known === undefined) fail(`pet ${pet.id} was read but never acknowledged with 201`, sent, answer);
    if (JSON.stringify(known) !== JSON.stringify(pet)) fail(`pet ${pet.id} differs from its 201`, sent, answer);
  }
  return pets;
}

/**
 * Checks one answer against the contract, and records a 201 in `ledger`. Throws with the
 * request and the answer on the first rule broken. `inFlight`: ids created by requests that ran
 * concurrently with this one (a read of them may or may not find them).
 */
export function checkAnswer(sent: Sent, answer: Answer, ledger: Ledger, inFlight?: ReadonlySet<number>): void {
  const { status, headers } = answer;
  const method = sent.method.toUpperCase();
  const head = method === "HEAD";
  const allowed = [200, 201, 400, 401, 404, 405, 413, 415, 422];
  if (sent.storage !== "up") allowed.push(503);
  if (!allowed.includes(status)) fail(`status ${status} is not allowed here`, sent, answer);

  // Headers of every answer.
  // A caller's pet, page or create is kept by its browser only; errors and the public document never.
  const kept = status < 300 && !sent.path.endsWith("/openapi.json");
  const cacheControl = kept ? "private, no-cache" : "no-store";
  if (headers["cache-control"] !== cacheControl) fail(`Cache-Control: ${cacheControl} is missing`, sent, answer);
  const id = headers["x-request-id"] ?? "";
  if (!REQUEST_ID.test(id)) fail("X-Request-Id is missing or malformed", sent, answer);
  const clientId = sent.requestId;
  if (typeof clientId === "string" && REQUEST_ID.test(clientId) && id !== clientId) {
    fail("a valid client X-Request-Id was not echoed", sent, answer);
  }
  if (headers["x-powered-by"] !== undefined) fail("X-Powered-By is sent", sent, answer);
  if (head && answer.body !== "") fail("HEAD answered with a body", sent, answer);
  if (!head && headers["content-length"] !== String(Buffer.byteLength(answer.body))) {
    fail("Content-Length does not match the body", sent, answer);
  }
  if (answer.body.includes(SENTINEL) || STACK.test(answer.body) || answer.body.includes(sent.key)) {
    fail("the body leaks an internal detail, a stack trace or the key", sent, answer);
  }

  // Error bodies.
  let error: v.InferOutput<typeof ErrorSchema> | undefined;
  if (status >= 400) {
    if (headers["content-type"] !== "application/json; charset=utf-8") fail("error without JSON type", sent, answer);
    if (!head) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(answer.body);
      } catch {
        fail("error body is not JSON", sent, answer);
      }
      if (!v.is(ErrorSchema, parsed)) fail("error body does not match the Error schema", sent, answer);
      error = parsed;
      if (error.status !== status || ERRORS[error.code].status !== status) {
        fail("error body's status or code disagrees with the HTTP status", sent, answer);
      }
    }
  }
  if (status === 503 && headers["retry-after"] !== "1") fail("503 without Retry-After: 1", sent, answer);
  const expectCode = (code: string) => {
    if (error !== undefined && error.code !== code) fail(`expected code ${code}`, sent, answer);
  };
  const expect = (outcome: Outcome) => {
    if (status !== outcome.status) fail(`expected ${outcome.status}`, sent, answer);
    if (outcome.code !== undefined) expectCode(outcome.code);
  };

  // 1. Route.
  const path = sent.path;
  const isCollection = path === "/v1/pets";
  const rawId = path.startsWith("/v1/pets/") ? path.slice("/v1/pets/".length) : undefined;
  const isItem = rawId !== undefined && rawId !== "" && !rawId.includes("/");
  const isPublic = path === "/v1/openapi.json";
  if (!isCollection && !isItem && !isPublic) {
    expect({ status: 404, code: "not_found" });
    return;
  }
  const methods = isCollection ? ["GET", "HEAD", "POST"] : ["GET", "HEAD"];
  if (!methods.includes(method)) {
    expect({ status: 405, code: "method_not_allowed" });
    if (headers.allow !== methods.join(", ")) fail("405 without the right Allow header", sent, answer);
    return;
  }
  if (isPublic) {
    expect({ status: 200 });
    return;
  }
  if (isItem) {
    for (const name of ["deprecation", "sunset", "link"]) {
      if (headers[name] === undefined) fail(`getPet answer without ${name}`, sent, answer);
    }
  }

  // 2. Key.
  if (repeatedAuthorization(sent.authorization)) {
    expect({ status: 400, code: "invalid_request" });
    if (headers["www-authenticate"] !== 'Bearer realm="petstore", error="invalid_request"') {
      fail('400 invalid_request without error="invalid_request"', sent, answer);
    }
    return;
  }
  if (!validKey(sent.authorization, sent.key)) {
    expect({ status: 401, code: "unauthorized" });
    const challenge = headers["www-authenticate"] ?? "";
    if (!challenge.startsWith('Bearer realm="petstore"')) fail("401 without the Bearer challenge", sent, answer);
    if (sent.authorization === undefined && challenge !== 'Bearer realm="petstore"') {
      fail("a missing key must get the plain challenge", sent, answer);
    }
    return;
  }
  if (status === 401) fail("the right key was refused", sent, answer);

  // 3 and 4. Content, then the operation.
  if (isItem) {
    let decoded = rawId as string;
    try {
      decoded = decodeURIComponent(decoded);
    } catch {}
    const petId = /^[0-9]{1,16}$/.test(decoded) ? Number(decoded) : 0;
    if (petId < 1 || petId > Number.MAX_SAFE_INTEGER) {
      expect({ status: 400, code: "invalid_pet_id" });
      return;
    }
    if (sent.storage !== "up") {
      expect({ status: 503, code: "storage_unavailable" });
      return;
    }
    if (!ledger.has(petId)) {
      expect({ status: 404, code: "pet_not_found" });
      return;
    }
    if (status === 404 && inFlight?.has(petId)) {
      expectCode("pet_not_found");
      return;
    }
    expect({ status: 200 });
    if (!head) checkPets(JSON.parse(answer.body), ledger, sent, answer);
    return;
  }
  if (method === "POST") {
    if (!sent.exactPost) {
      if (status === 201) fail("a 201 over an unchecked body framing", sent, answer);
      return;
    }
    // The key is checked first, before the content type, size and body.
    const idempotencyKey = idempotencyKeyOf(sent.idempotencyKey);
    if (idempotencyKey === INVALID) {
      expect({ status: 400, code: "invalid_idempotency_key" });
      return;
    }
    const outcome = expectedCreate(sent);
    const asked = outcome.pet;
    let fingerprint = "";
    if (idempotencyKey !== undefined && asked !== undefined) {
      fingerprint = JSON.stringify([asked.name, asked.categoryId, asked.status ?? "available"]);
      const known = keysOf(ledger).get(idempotencyKey);
      if (known !== undefined && known.fingerprint !== fingerprint) {
        expect({ status: 422, code: "idempotency_key_reused" });
        return;
      }
      if (known !== undefined) {
        expect({ status: 201 });
        if (answer.body !== known.pet) fail("a replay is not the first answer's pet", sent, answer);
        if (headers["idempotent-replayed"] !== "true") fail("a replay without Idempotent-Replayed: true", sent, answer);
        if (headers.location !== `/v1/pets/${JSON.parse(known.pet).id}`)
          fail("a replay with another Location", sent, answer);
        return;
      }
    }
    expect(outcome);
    if (status !== 201) return;
    if (headers["idempotent-replayed"] !== undefined) fail("a first create marked as replayed", sent, answer);
    const pet = JSON.parse(answer.body);
    if (!v.is(Pet, pet)) fail("201 body is not a Pet", sent, answer);
    if (ledger.has(pet.id)) fail(`id ${pet.id} was handed out twice`, sent, answer);
    const pet0 = asked as v.InferOutput<typeof NewPet>;
    const wanted = { id: pet.id, name: pet0.name, categoryId: pet0.categoryId, status: pet0.status ?? "available" };
    if (JSON.stringify(pet) !== JSON.stringify(wanted)) fail("201 body is not the pet sent", sent, answer);
    if (headers.location !== `/v1/pets/${pet.id}`) fail("201 without the right Location", sent, answer);
    ledger.set(pet.id, pet);
    if (idempotencyKey !== undefined) keysOf(ledger).set(idempotencyKey, { fingerprint, pet: answer.body });
    return;
  }
  // GET or HEAD /v1/pets
  if (sent.storage !== "up" && status === 503) {
    expectCode("storage_unavailable");
    return;
  }
  if (sent.query === "" && status !== 200) fail("a plain list was not 200", sent, answer);
  if (status === 400) {
    expectCode("invalid_query");
    return;
  }
  expect({ status: 200 });
  if (head) return;
  const pets = checkPets(JSON.parse(answer.body), ledger, sent, answer);
  for (let i = 1; i < pets.length; i++) {
    if ((pets[i] as { id: number }).id <= (pets[i - 1] as { id: number }).id)
      fail("list not in id order", sent, answer);
  }
  if (pets.length > 100) fail("more than 100 pets in a page", sent, answer);
}

/** Follows rel="next" from `first` until it is absent; the pets seen, in order (bounded). */
export async function walk(get: (pathAndQuery: string) => Promise<Answer>, firstPage: string) {
  const seen: v.InferOutput<typeof Pet>[] = [];
  let next: string | undefined = firstPage;
  for (let pages = 0; next !== undefined; pages++) {
    if (pages > 10_000) throw new Error("the pagination walk does not end");
    const answer = await get(next);
    if (answer.status !== 200) throw new Error(`walk: ${next} answered ${answer.status} ${answer.body}`);
    seen.push(...(JSON.parse(answer.body) as v.InferOutput<typeof Pet>[]));
    next = /^<([^>]+)>; rel="next"$/.exec(answer.headers.link ?? "")?.[1];
  }
  return seen;
}

/**
 * Walks the whole list and each status filter and checks that they show exactly the
 * acknowledged pets, once each, in id order.
 */
export async function checkWalk(get: (pathAndQuery: string) => Promise<Answer>, ledger: Ledger): Promise<void> {
  const expected = [...ledger.values()].sort((a, b) => a.id - b.id);
  const filters: (string | undefined)[] = [undefined, ...PET_STATUSES];
  for (const status of filters) {
    const seen = await walk(get, `/v1/pets?limit=${status === undefined ? 7 : 3}${status ? `&status=${status}` : ""}`);
    const wanted = expected.filter((p) => status === undefined || p.status === status);
    const got = JSON.stringify(seen);
    if (got !== JSON.stringify(wanted)) {
      throw new Error(
        `walk (status=${status ?? "any"}) shows ${seen.length} pets, ${wanted.length} were acknowledged: ` +
          `ids ${seen.map((p) => p.id).join(",")} vs ${wanted.map((p) => p.id).join(",")}`,
      );
    }
  }
}

/** True when the valid JSON `text` repeats a member name; the fuzzer's 10,000-level bodies (one member an object) do not. */
function repeatsMember(text: string): boolean {
  try {
    return repeatedMemberOf(text) !== undefined;
  } catch (error) {
    if (error instanceof RangeError) return false; // deeper than the reference's recursion reaches
    throw error;
  }
}

/**
 * The first member name an object of the valid JSON `text` repeats, in text order (names compared
 * once decoded), or undefined: a plain recursive-descent reading of I-JSON's rule (RFC 7493).
 */
export function repeatedMemberOf(text: string): string | undefined {
  let at = 0;
  let found: string | undefined;
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at] as string)) at++;
  };
  const string = (): string => {
    const start = at++;
    while (text[at] !== '"') at += text[at] === "\\" ? 2 : 1;
    at++;
    return JSON.parse(text.slice(start, at));
  };
  const value = (): void => {
    space();
    const c = text[at];
    if (c === "{" || c === "[") {
      at++;
      const names: string[] | undefined = c === "{" ? [] : undefined;
      space();
      if (text[at] === (c === "{" ? "}" : "]")) {
        at++;
        return;
      }
      for (;;) {
        if (names !== undefined) {
          space();
          const name = string();
          if (found === undefined && names.includes(name)) found = name;
          names.push(name);
          space();
          at++; // :
        }
        value();
        space();
        const next = text[at++];
        if (next === "}" || next === "]") return;
      }
    }
    if (c === '"') {
      string();
      return;
    }
    while (at < text.length && !",]} \t\n\r".includes(text[at] as string)) at++;
  };
  value();
  return found;
}
