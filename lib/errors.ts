/**
 * The contract's error table, defined once: every expected failure is a
 * `PetStoreError` carrying one of these codes, and the HTTP status comes from here.
 */
export const ERRORS = {
  invalid_body: { status: 400, message: "The request body is not a valid NewPet." },
  malformed_json: { status: 400, message: "The request body is not valid JSON." },
  invalid_query: { status: 400, message: "The query string is invalid." },
  invalid_idempotency_key: {
    status: 400,
    message:
      'Idempotency-Key must be given once, as 1 to 255 characters from "!" to "~" other than a double quote or a backslash, optionally in double quotes.',
  },
  invalid_request: {
    status: 400,
    message: "The Authorization header must be given once.",
  },
  bad_request: { status: 400, message: "The HTTP request is malformed." },
  invalid_pet_id: {
    status: 400,
    message: "petId must be a decimal integer from 1 to 9007199254740991.",
  },
  unauthorized: { status: 401, message: "A valid API key is required. Send the key as Authorization: Bearer <key>." },
  insufficient_scope: {
    status: 403,
    message: "This key or token does not hold the scope this operation needs (WWW-Authenticate names it).",
  },
  pet_not_found: { status: 404, message: "No pet has this id." },
  not_found: { status: 404, message: "No such route." },
  method_not_allowed: { status: 405, message: "This method is not allowed on this path." },
  request_timeout: { status: 408, message: "The request did not arrive in time." },
  idempotency_key_in_use: {
    status: 409,
    message: "A request with this Idempotency-Key is still being processed. Try again shortly.",
  },
  payload_too_large: { status: 413, message: "The request body is too large." },
  uri_too_long: { status: 414, message: "The request line is too long." },
  unsupported_media_type: {
    status: 415,
    message: "The request body must be sent as application/json.",
  },
  idempotency_key_reused: {
    status: 422,
    message: "This Idempotency-Key was already used for a different request. Use a new key for a new pet.",
  },
  rate_limited: {
    status: 429,
    message: "Too many requests with this API key. Wait the seconds of Retry-After, then try again.",
  },
  headers_too_large: { status: 431, message: "The request headers are too large." },
  internal_error: { status: 500, message: "An unexpected error occurred." },
  storage_unavailable: {
    status: 503,
    message: "The storage backend is unavailable. Try again shortly.",
  },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * The code of an Error answer: one of the contract's table, or a rule code an embedding
 * application declared (a `RuleViolation`, see lib/rules.ts).
 */
export type AnyErrorCode = ErrorCode | (string & {});

/** One invalid field of a request, as reported in `details`. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** The spec's Error body. */
export interface ErrorBody {
  code: AnyErrorCode;
  message: string;
  status: number;
  details?: ErrorDetail[];
}

/**
 * The one error class for expected failures. `code` is from the contract's table, or (for a
 * `RuleViolation`, its subclass) a rule code of the embedding application. `cause` (never sent to
 * clients) keeps the underlying error for logs.
 *
 * @example
 *   try { await store.getPet(7) } catch (e) { if (isPetStoreError(e, "pet_not_found")) ... }
 */
export class PetStoreError extends Error {
  readonly code: AnyErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  /**
   * The `X-Request-Id` of the answer this error was read from (set by `petstore-lib/client`), to
   * find the request in the server's logs. Absent on errors thrown in process.
   */
  declare readonly requestId?: string;

  constructor(
    code: ErrorCode,
    message?: string,
    options?: { details?: ErrorDetail[]; cause?: unknown; requestId?: string },
  ) {
    super(message ?? ERRORS[code].message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "PetStoreError";
    this.code = code;
    this.status = ERRORS[code].status;
    this.details = options?.details;
    if (options?.requestId !== undefined) (this as { requestId?: string }).requestId = options.requestId;
  }

  /** The JSON body sent to clients: code, message, status and (for validation) details. */
  toJSON(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message, status: this.status };
    if (this.details !== undefined) body.details = this.details;
    return body;
  }
}

/**
 * True when `error` is a PetStoreError (optionally with the given code: a table code or a rule
 * code). With a code, `error.code` is typed as that code.
 */
export function isPetStoreError(error: unknown): error is PetStoreError;
export function isPetStoreError<C extends AnyErrorCode>(
  error: unknown,
  code: C | undefined,
): error is PetStoreError & { readonly code: C };
export function isPetStoreError(error: unknown, code?: AnyErrorCode): error is PetStoreError {
  return error instanceof PetStoreError && (code === undefined || error.code === code);
}

/**
 * An answer refused by the handler's own checks. A plain value, not a PetStoreError: an Error
 * captures a stack trace, which 401s and 404s under attack need not pay for.
 */
export interface Refusal {
  readonly code: AnyErrorCode;
  readonly message: string;
  readonly details?: ErrorDetail[] | undefined;
  /** The HTTP status, when the code is not one of the table's (a rule code). */
  readonly status?: number;
}

export function refuse(code: ErrorCode, message: string = ERRORS[code].message, details?: ErrorDetail[]): Refusal {
  return { code, message, details };
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === "object" && value !== null && "code" in value && "message" in value;
}
