/**
 * valibot schemas: the single source of the TypeScript types, the runtime checks and (through
 * @valibot/to-json-schema) the OpenAPI document; and beside them, the checks of the operations'
 * inputs that use them.
 */
import * as v from "valibot";
import { isDigits } from "./chars.ts";
import { ERRORS, PetStoreError } from "./errors.ts";
import { boundedDetails } from "./quote.ts";

export const MAX_ID = Number.MAX_SAFE_INTEGER;
export const MAX_NAME_LENGTH = 200;
export const MIN_LIMIT = 1;
export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 20;

/** getPet's deprecation (RFC 9745 `Deprecation`) and removal (RFC 8594 `Sunset`) dates, by default. */
export const DEFAULT_DEPRECATED_AT = new Date("2026-11-25T00:00:00Z");
export const DEFAULT_SUNSET_AT = new Date("2030-12-05T00:00:00Z");

export const PET_STATUSES = ["available", "pending", "sold"] as const;

export const PetStatus = v.pipe(
  v.picklist(PET_STATUSES, "must be one of available, pending, sold"),
  v.description("Availability status."),
);
export type PetStatus = v.InferOutput<typeof PetStatus>;

/**
 * An id field: an integer from 1 to 2^53-1, with its description for the OpenAPI document. One
 * flat pipe rather than a pipe inside a pipe: every create runs it, and the nesting cost 15% of
 * the whole NewPet check.
 */
const id = (description: string) =>
  v.pipe(
    v.number("must be an integer"),
    v.integer("must be an integer"),
    v.minValue(1, "must be at least 1"),
    v.maxValue(MAX_ID, `must be at most ${MAX_ID}`),
    v.description(description),
  );
const CATEGORY_ID = "Identifier of the category the animal belongs to.";

/** Counts code points, so that a name of 200 emoji is 200 characters, as JSON Schema counts. */
const codePoints = (s: string): number => {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= s.length) n++;
    else {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      n++;
    }
  }
  return n;
};

const Name = v.pipe(
  v.string("must be a string"),
  v.check((s) => s.trim().length > 0, "must contain at least one non-whitespace character"),
  v.check((s) => codePoints(s) <= MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`),
  v.metadata({ minLength: 1, maxLength: MAX_NAME_LENGTH, pattern: "\\S" }),
  v.description("The animal's name."),
);

/** The body of `createPet`. Unknown fields (`id` and `__proto__` included) are refused. */
export const NewPet = v.strictObject(
  {
    name: Name,
    categoryId: id(CATEGORY_ID),
    status: v.optional(PetStatus),
  },
  "must be a JSON object",
);
export type NewPet = v.InferInput<typeof NewPet>;

/** The validated NewPet a `beforeCreate` sees: `status` is always there (default `available`). */
export interface CheckedNewPet {
  readonly name: string;
  readonly categoryId: number;
  readonly status: PetStatus;
}

/** A stored pet, as every response shows it: id, name, categoryId, status, in that order. */
export const Pet = v.strictObject({
  id: id("Unique identifier, assigned by the service on creation."),
  name: Name,
  categoryId: id(CATEGORY_ID),
  status: PetStatus,
});
export type Pet = v.InferOutput<typeof Pet>;

export const Pets = v.array(Pet);

/** True for a name NewPet takes: a non-whitespace character, at most 200 characters. */
export function isPetName(name: string): boolean {
  return (name.length <= MAX_NAME_LENGTH || codePoints(name) <= MAX_NAME_LENGTH) && /\S/.test(name);
}

/**
 * True for a value that is a Pet by the rules a create applies (the NewPet limits included): the
 * check of what a storage hands back, for every pet of every page (a parse with the `Pet`
 * schema would build what it then throws away).
 */
export function isPet(p: unknown): p is Pet {
  if (typeof p !== "object" || p === null) return false;
  const { id, name, categoryId, status } = p as Record<string, unknown>;
  return (
    typeof id === "number" &&
    Number.isSafeInteger(id) &&
    id >= 1 &&
    id <= MAX_ID &&
    typeof name === "string" &&
    isPetName(name) &&
    typeof categoryId === "number" &&
    Number.isSafeInteger(categoryId) &&
    categoryId >= 1 &&
    categoryId <= MAX_ID &&
    (status === "available" || status === "pending" || status === "sold")
  );
}

/** The query of `listPets`, as the plain function takes it. */
export const ListQuery = v.strictObject({
  limit: v.optional(
    v.pipe(
      v.number("limit must be an integer"),
      v.integer("limit must be an integer"),
      v.minValue(MIN_LIMIT, `limit must be at least ${MIN_LIMIT}`),
      v.maxValue(MAX_LIMIT, `limit must be at most ${MAX_LIMIT}`),
    ),
  ),
  status: v.optional(PetStatus),
  cursor: v.optional(v.string("cursor must be a string")),
});
export type ListQuery = v.InferInput<typeof ListQuery>;

export const ErrorSchema = v.object({
  code: v.picklist(Object.keys(ERRORS) as (keyof typeof ERRORS)[]),
  message: v.string(),
  status: v.pipe(v.number(), v.integer()),
  details: v.optional(v.array(v.strictObject({ path: v.string(), message: v.string() }))),
});

/** Turns valibot issues into the `details` of a 400 answer: a field path and a message. */
export function issueDetails(issues: readonly v.BaseIssue<unknown>[]): { path: string; message: string }[] {
  return issues.map((issue) => {
    const path = issue.path?.map((p) => String(p.key)).join(".") ?? "";
    // valibot reports a missing key and an unknown key alike as strict_object; only the unknown
    // one expects "never".
    if (issue.kind === "schema" && issue.type === "strict_object" && issue.expected === "never" && path !== "") {
      return { path, message: "is an unknown field" };
    }
    if (issue.kind === "schema" && issue.input === undefined && path !== "") {
      return { path, message: "is required" };
    }
    return { path, message: issue.message };
  });
}

/**
 * The usual NewPet, checked by hand: an object with no key but the three, a name of at most 200
 * UTF-16 units (so at most 200 characters) with a non-space, an id, a status or none. Anything
 * else is undefined, and the NewPet schema decides it (and words its refusal). What this accepts
 * the schema accepts, with the same result (a test holds them together); it costs a tenth of a
 * schema parse, which every create pays.
 */
export function usualNewPet(input: unknown): CheckedNewPet | undefined {
  if (typeof input !== "object" || input === null) return undefined;
  // for…in, as the schema's own check of unknown keys: own and inherited enumerable keys
  for (const key in input) if (key !== "name" && key !== "categoryId" && key !== "status") return undefined;
  const { name, categoryId, status } = input as Record<string, unknown>;
  if (typeof name !== "string" || name.length > MAX_NAME_LENGTH || name.trim().length === 0) return undefined;
  if (typeof categoryId !== "number" || !Number.isSafeInteger(categoryId) || categoryId < 1) return undefined;
  if (status === undefined) return { name, categoryId, status: "available" };
  if (status === "available" || status === "pending" || status === "sold") return { name, categoryId, status };
  return undefined;
}

/** The NewPet in `input` (JavaScript callers may pass anything) with defaults applied, or `invalid_body`. */
export function checkNewPet(input: unknown): CheckedNewPet {
  const usual = usualNewPet(input);
  if (usual !== undefined) return usual;
  const parsed = v.safeParse(NewPet, input);
  if (!parsed.success) {
    const { shown: details, omitted } = boundedDetails(issueDetails(parsed.issues));
    const more = omitted === 0 ? "" : ` (and ${omitted} more)`;
    const message =
      details.length === 1 && details[0]?.path === ""
        ? `The request body is not a valid NewPet: ${details[0].message}.`
        : `The request body is not a valid NewPet: ${details.map((d) => `${d.path} ${d.message}`).join("; ")}${more}.`;
    throw new PetStoreError("invalid_body", message, { details });
  }
  const { name, categoryId, status = "available" } = parsed.output;
  return { name, categoryId, status };
}

/** A petId: a decimal integer from 1 to 2^53-1, as a number or a string; `invalid_pet_id` otherwise. */
export function parsePetId(id: unknown): number {
  if (typeof id === "number") {
    if (Number.isSafeInteger(id) && id >= 1) return id;
  } else if (typeof id === "string" && id.length <= 16 && isDigits(id)) {
    const n = Number(id);
    if (n >= 1 && n <= MAX_ID) return n;
  }
  throw new PetStoreError("invalid_pet_id");
}
