/**
 * What the client reads from an answer: the pet or the page it carries, the next page's cursor
 * from `Link`, the `getPet` deprecation headers, and the `PetStoreError` an Error body stands for
 * (with the answer's request id), as the in-process store would have thrown it.
 */

import type { Pet } from "../lib/entries/schemas.ts";
import { ERRORS, PetStoreError } from "../lib/errors.ts";
import type { AnyErrorCode, ErrorCode, ErrorDetail } from "../lib/index.ts";
import type { Answer } from "./exchange.ts";

/** The code of an answer that is no Error body of the contract (a proxy's page, a wrong `baseUrl`). */
export const UNEXPECTED_ANSWER = "unexpected_answer";

const RULE_CODE = /^[a-z][a-z0-9_]{2,63}$/;
const RULE_STATUSES = [400, 403, 409, 422];

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A PetStoreError whose code and status are not the table's: a rule's, or an unexpected answer's. */
function errorWithCode(code: string, status: number, message: string, requestId?: string): PetStoreError {
  const error = new PetStoreError("internal_error", message, requestId === undefined ? undefined : { requestId });
  (error as { code: AnyErrorCode }).code = code;
  (error as { status: number }).status = status;
  // A code the table does not have, with a rule's status, is a business rule's refusal: as the
  // store's own RuleViolation, isRuleViolation(error) is true for it.
  if (RULE_CODE.test(code) && RULE_STATUSES.includes(status)) error.name = "RuleViolation";
  return error;
}

/** The error an answer that is not a success stands for. */
export function errorOf(answer: Answer): PetStoreError {
  const requestId = answer.headers.get("x-request-id") ?? undefined;
  const body = parseJson(answer.text) as { code?: unknown; message?: unknown; details?: unknown } | undefined;
  const code = body?.code;
  if (typeof code !== "string" || typeof body?.message !== "string") {
    const message = `The server answered HTTP ${answer.status} without an Error body.`;
    return errorWithCode(UNEXPECTED_ANSWER, answer.status, message, requestId);
  }
  const details = Array.isArray(body.details) ? (body.details as ErrorDetail[]) : undefined;
  if (Object.hasOwn(ERRORS, code) && ERRORS[code as ErrorCode].status === answer.status) {
    return new PetStoreError(code as ErrorCode, body.message, {
      ...(details === undefined ? {} : { details }),
      ...(requestId === undefined ? {} : { requestId }),
    });
  }
  return errorWithCode(code, answer.status, body.message, requestId);
}

/** The Error body's code of an answer, if it has one. */
export function codeOf(answer: Answer): string | undefined {
  const code = (parseJson(answer.text) as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

function isPet(value: unknown): value is Pet {
  const pet = value as Partial<Pet> | null;
  return typeof pet === "object" && pet !== null && typeof pet.id === "number" && typeof pet.name === "string";
}

/** The pet a success carries. */
export function petOf(answer: Answer): Pet {
  const pet = parseJson(answer.text);
  if (isPet(pet)) return pet;
  throw errorWithCode(UNEXPECTED_ANSWER, answer.status, "The answer does not carry a Pet.");
}

/** The pets a page carries. */
export function petsOf(answer: Answer): Pet[] {
  const pets = parseJson(answer.text);
  if (Array.isArray(pets) && pets.every(isPet)) return pets;
  throw errorWithCode(UNEXPECTED_ANSWER, answer.status, "The answer does not carry a list of Pets.");
}

/** The targets of a `Link` header whose `rel` includes `rel` (RFC 8288). */
function findLinks(header: string | null, rel: string): string[] {
  if (header === null) return [];
  const targets: string[] = [];
  for (const match of header.matchAll(/<([^>]*)>([^,<]*)/g)) {
    const rels = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2] ?? "");
    const names = (rels?.[1] ?? rels?.[2] ?? "").toLowerCase().split(/\s+/);
    if (names.includes(rel)) targets.push(match[1] ?? "");
  }
  return targets;
}

/** The cursor of the next page, from `Link: <…&cursor=C>; rel="next"`; undefined on the last page. */
export function nextCursorOf(headers: Headers): string | undefined {
  const target = findLinks(headers.get("link"), "next")[0];
  if (target === undefined) return undefined;
  const query = target.indexOf("?");
  return query === -1 ? undefined : (new URLSearchParams(target.slice(query + 1)).get("cursor") ?? undefined);
}

/** The page size a next link asks for (`limit=N`), when there is one. */
export function nextLimitOf(headers: Headers): number | undefined {
  const target = findLinks(headers.get("link"), "next")[0];
  const limit = target === undefined ? null : new URLSearchParams(target.split("?")[1] ?? "").get("limit");
  return limit === null ? undefined : Number(limit);
}

function resolveUrl(target: string | undefined, base: string): string | undefined {
  if (target === undefined) return undefined;
  try {
    return new URL(target, base).href;
  } catch {
    return target;
  }
}

/** What `onDeprecation` is told, once per client, when `getPet`'s answer says it is deprecated. */
export interface DeprecationNotice {
  operation: "getPet";
  /** When it was deprecated (`Deprecation: @<seconds>`, RFC 9745); undefined when unreadable. */
  deprecatedAt: Date | undefined;
  /** When it goes away (`Sunset`, RFC 8594), if the answer says. */
  sunsetAt: Date | undefined;
  /** What replaces it (`Link: <…>; rel="successor-version"`, as an absolute URL), if the answer says. */
  successor: string | undefined;
}

/** The notice an answer's deprecation headers give (links resolved against `url`), or undefined when it has none. */
export function deprecationOf(headers: Headers, url: string): DeprecationNotice | undefined {
  const deprecation = headers.get("deprecation");
  if (deprecation === null) return undefined;
  const seconds = /^@(-?[0-9]+)$/.exec(deprecation.trim())?.[1];
  const sunset = headers.get("sunset");
  const sunsetAt = sunset === null ? undefined : new Date(sunset);
  return {
    operation: "getPet",
    deprecatedAt: seconds === undefined ? undefined : new Date(Number(seconds) * 1000),
    sunsetAt: sunsetAt === undefined || Number.isNaN(sunsetAt.getTime()) ? undefined : sunsetAt,
    successor: resolveUrl(findLinks(headers.get("link"), "successor-version")[0], url),
  };
}
