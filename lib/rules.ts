/**
 * The embedding application's business rules (`createPetStore({ rules })`), checked once and run
 * around every create: `beforeCreate` may refuse it with a `RuleViolation` (its code and status
 * become the Error answer); `afterCreate` runs once the pet is stored, and the answer waits for it
 * (bounded), but nothing it does changes the answer.
 */
import type { Principal } from "./auth/principal.ts";
import type { Awaitable } from "./awaitable.ts";
import type { AnyErrorCode } from "./errors.ts";
import { ERRORS, PetStoreError } from "./errors.ts";
import { scopeOf } from "./idempotency.ts";
import { checkOptionNames } from "./options.ts";
import { newRequestId } from "./request-id.ts";
import type { CheckedNewPet, Pet } from "./schemas.ts";

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
  /**
   * Who is calling, as the verifier answered: `{ id, scopes }` (a key's name, a token's `sub`).
   * `undefined` for an in-process create.
   */
  readonly principal?: Principal | undefined;
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
  const shaped = error as { name?: unknown; code?: unknown; status?: unknown } | null;
  return (
    error instanceof PetStoreError &&
    shaped?.name === "RuleViolation" &&
    badCode(shaped.code) === undefined &&
    badStatus(shaped.status) === undefined
  );
}

/** Checks `createPetStore({ rules })`; throws a clear TypeError for anything that cannot work. */
export function checkRules(rules: unknown): CheckedRules | undefined {
  if (rules === undefined) return undefined;
  if (rules === null || typeof rules !== "object" || Array.isArray(rules)) {
    throw new TypeError("createPetStore: rules must be an object { beforeCreate?, afterCreate?, codes? }");
  }
  checkOptionNames("createPetStore: rules", rules, ["beforeCreate", "afterCreate", "codes"]);
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

/** Who asks for a create: the rules' context is made from it, and only when there are rules. */
export interface Caller {
  requestId: string;
  /** The bearer token of an HTTP create: only ever turned into a scope. */
  token?: string | undefined;
  /** The scope an in-process caller gave. */
  scope?: string | undefined;
  /** Who made an HTTP create. */
  principal?: Principal | undefined;
}

/** The caller of an in-process create: the request id it gave or a new one, and its scope (if any). */
export function inProcessCaller(given?: { requestId?: string; scope?: string }): Caller {
  const requestId = typeof given?.requestId === "string" && given.requestId !== "" ? given.requestId : newRequestId();
  return { requestId, scope: typeof given?.scope === "string" ? given.scope : undefined };
}

/** How long `afterCreate` is waited for, and where the failures of the rules are reported. */
export interface RuleLimits {
  timeoutMs: number;
  report: (error: unknown) => void;
}

/**
 * A create under the rules: `beforeCreate`, then `write`, then `afterCreate` (waited for at most
 * `timeoutMs`). A replay stored nothing, so `afterCreate` does not run for it.
 */
export async function createUnderRules<Created extends { pet: Pet; replayed: boolean }>(
  rules: CheckedRules,
  data: CheckedNewPet,
  caller: Caller | undefined,
  write: (data: CheckedNewPet) => Awaitable<Created>,
  limits: RuleLimits,
): Promise<Created> {
  const context: RuleContext = Object.freeze({
    requestId: caller?.requestId ?? "",
    scope: caller?.token !== undefined ? scopeOf(caller.token) : caller?.scope,
    ...(caller?.principal === undefined ? {} : { principal: caller.principal }),
  });
  if (rules.beforeCreate !== undefined) {
    try {
      // A copy: what the rule sees cannot change what is stored.
      await rules.beforeCreate(Object.freeze({ ...data }), context);
    } catch (error) {
      if (isRuleViolation(error)) throw error;
      throw new PetStoreError("internal_error", undefined, {
        cause: new Error("rules.beforeCreate threw something other than a RuleViolation", { cause: error }),
      });
    }
  }
  const created = await write(data);
  if (rules.afterCreate !== undefined && !created.replayed) {
    await runAfterCreate(rules.afterCreate, created.pet, context, limits);
  }
  return created;
}

/** Runs afterCreate on a copy of the pet, for at most `timeoutMs`; never throws. */
async function runAfterCreate(
  rule: NonNullable<PetStoreRules["afterCreate"]>,
  pet: Pet,
  context: RuleContext,
  { timeoutMs, report }: RuleLimits,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const failed = (error: unknown) =>
    report(new Error("rules.afterCreate failed; the pet is stored and the answer is unchanged", { cause: error }));
  try {
    const done = Promise.resolve(rule({ ...pet }, context));
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), timeoutMs);
    });
    if ((await Promise.race([done, late])) === "late") {
      report(
        new Error(
          `rules.afterCreate took longer than ${timeoutMs} ms: the answer was sent without waiting further (pet ${pet.id})`,
        ),
      );
      done.then(undefined, failed);
    }
  } catch (error) {
    failed(error);
  } finally {
    clearTimeout(timer);
  }
}
