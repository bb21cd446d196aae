/**
 * The embedding application's own business rules: `createPetStore({ rules })`. `beforeCreate`
 * runs after validation and before anything is stored, on every path (any adapter, and the
 * in-process `createPet`); it refuses a create by throwing a `RuleViolation`, whose code and
 * status become the Error answer. `afterCreate` runs once the pet is stored, and the answer waits
 * for it (bounded), but nothing it does changes the answer.
 */
import type { AnyErrorCode } from "./errors.ts";
import { ERRORS, PetStoreError } from "./errors.ts";
import { newRequestId } from "./request-id.ts";
import type { Pet, PetStatus } from "./schemas.ts";

/** The statuses a rule may answer with. */
export type RuleStatus = 400 | 403 | 409 | 422;

const RULE_STATUSES: readonly number[] = [400, 403, 409, 422];

/** A rule code: 3 to 64 characters, a lower-case letter then lower-case letters, digits or `_`. */
export const RULE_CODE_PATTERN = /^[a-z][a-z0-9_]{2,63}$/;

/** What a rule knows about the request: never the token. */
export interface RuleContext {
  /** The request id of the answer (`X-Request-Id`); a new one for an in-process create. */
  readonly requestId: string;
  /**
   * Who is calling: a digest of the bearer token (SHA-256, base64url, 43 characters), the same
   * for every request with that token. `undefined` for an in-process create that gives none.
   */
  readonly scope: string | undefined;
}

/** The validated NewPet a `beforeCreate` sees: `status` is always there (default `available`). */
export interface CheckedNewPet {
  readonly name: string;
  readonly categoryId: number;
  readonly status: PetStatus;
}

/** A rule code the application declares, so that the OpenAPI document the store serves lists it. */
export interface RuleCodeDeclaration {
  code: string;
  status: RuleStatus;
  description: string;
}

export interface PetStoreRules {
  /**
   * Runs after validation, before anything is stored. Throw (or reject with) a `RuleViolation` to
   * refuse the create; anything else it throws is a `500 internal_error`, reported to `onError`.
   */
  beforeCreate?: (newPet: CheckedNewPet, context: RuleContext) => void | Promise<void>;
  /**
   * Runs once the pet is stored; the answer waits for it (at most `operationTimeoutMs`). What it
   * throws, rejects or how long it takes is reported to `onError` and never changes the answer.
   */
  afterCreate?: (pet: Pet, context: RuleContext) => void | Promise<void>;
  /** The codes `beforeCreate` may refuse with, listed in the served OpenAPI document. */
  codes?: readonly RuleCodeDeclaration[];
}

/** The rules once checked: the functions, and the declared codes in order. */
export interface CheckedRules {
  beforeCreate: PetStoreRules["beforeCreate"];
  afterCreate: PetStoreRules["afterCreate"];
  codes: readonly RuleCodeDeclaration[];
}

/** Why a code or status cannot be a rule's; undefined when it can. */
function badCode(code: unknown): string | undefined {
  if (typeof code !== "string" || !RULE_CODE_PATTERN.test(code)) {
    return `must match ${RULE_CODE_PATTERN} (got ${JSON.stringify(code)})`;
  }
  if (Object.hasOwn(ERRORS, code)) return `must not be one of the contract's own codes (got "${code}")`;
  return undefined;
}

function badStatus(status: unknown): string | undefined {
  return RULE_STATUSES.includes(status as number)
    ? undefined
    : `must be 400, 403, 409 or 422 (got ${JSON.stringify(status)})`;
}

/**
 * A business rule refused the create. `beforeCreate` throws it; the answer is an Error body with
 * this code and status (default 422); in process, `createPet` rejects with it. A `PetStoreError`.
 *
 * @example throw new RuleViolation("unknown_category", "categoryId 9 is not one of our categories.", { status: 422 })
 */
export class RuleViolation extends PetStoreError {
  declare readonly code: AnyErrorCode;

  constructor(code: string, message: string, options: { status?: RuleStatus; cause?: unknown } = {}) {
    const codeProblem = badCode(code);
    if (codeProblem !== undefined) throw new TypeError(`RuleViolation: code ${codeProblem}`);
    if (typeof message !== "string" || message.trim() === "") {
      throw new TypeError("RuleViolation: message must be a non-empty string (it is sent to the client)");
    }
    if (options === null || typeof options !== "object")
      throw new TypeError("RuleViolation: options must be an object");
    const status = options.status ?? 422;
    const statusProblem = badStatus(status);
    if (statusProblem !== undefined) throw new TypeError(`RuleViolation: status ${statusProblem}`);
    super("invalid_body", message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "RuleViolation";
    // The table's codes are the base class's; a rule's own code and status replace them.
    (this as { code: string }).code = code;
    (this as { status: number }).status = status;
  }
}

/** True for a RuleViolation (also one from another copy of the library: same name, valid code and status). */
export function isRuleViolation(error: unknown): error is RuleViolation {
  if (error instanceof RuleViolation) return true;
  const e = error as { name?: unknown; code?: unknown; status?: unknown } | null;
  return (
    error instanceof PetStoreError &&
    e?.name === "RuleViolation" &&
    badCode(e.code) === undefined &&
    badStatus(e.status) === undefined
  );
}

/** Checks `createPetStore({ rules })`; throws a clear TypeError for anything that cannot work. */
export function checkRules(rules: unknown): CheckedRules | undefined {
  if (rules === undefined) return undefined;
  if (rules === null || typeof rules !== "object" || Array.isArray(rules)) {
    throw new TypeError("createPetStore: rules must be an object { beforeCreate?, afterCreate?, codes? }");
  }
  const known = new Set(["beforeCreate", "afterCreate", "codes"]);
  for (const name of Object.keys(rules)) {
    if (!known.has(name)) {
      throw new TypeError(`createPetStore: unknown rule "${name}" (known: beforeCreate, afterCreate, codes)`);
    }
  }
  const { beforeCreate, afterCreate, codes = [] } = rules as PetStoreRules;
  for (const [name, fn] of [
    ["beforeCreate", beforeCreate],
    ["afterCreate", afterCreate],
  ] as const) {
    if (fn !== undefined && typeof fn !== "function") {
      throw new TypeError(`createPetStore: rules.${name} must be a function (pet, context) => void | Promise<void>`);
    }
  }
  if (!Array.isArray(codes)) {
    throw new TypeError("createPetStore: rules.codes must be a list of { code, status, description }");
  }
  const seen = new Set<string>();
  const checked = codes.map((entry: unknown, i) => {
    const { code, status, description } = (entry ?? {}) as Partial<RuleCodeDeclaration>;
    const problem =
      (badCode(code) && `code ${badCode(code)}`) ??
      (badStatus(status) && `status ${badStatus(status)}`) ??
      (typeof description !== "string" || description.trim() === ""
        ? "description must be a non-empty string"
        : undefined) ??
      (seen.has(code as string) ? `code "${code}" is declared twice` : undefined);
    if (problem) throw new TypeError(`createPetStore: rules.codes[${i}]: ${problem}`);
    seen.add(code as string);
    return Object.freeze({ code, status, description }) as RuleCodeDeclaration;
  });
  return { beforeCreate, afterCreate, codes: Object.freeze(checked) };
}

/** The context of an in-process create: a new request id, and the scope the caller gave (if any). */
export function inProcessContext(given?: { requestId?: string; scope?: string }): RuleContext {
  const requestId = typeof given?.requestId === "string" && given.requestId !== "" ? given.requestId : newRequestId();
  return { requestId, scope: typeof given?.scope === "string" ? given.scope : undefined };
}
