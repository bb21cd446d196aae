/**
 * The storage breaker: after a run of failed storage calls (time-outs, lost connections) a store
 * stops waiting on a backend known to be down and answers `503 storage_unavailable` at once,
 * letting a probe call through every `probeIntervalMs` (a few at most in flight); the first call
 * that succeeds closes it. One slow call never opens it. docs/STORAGE.md says why these numbers.
 */
import { PetStoreError } from "../errors.ts";
import type { BreakerObservation } from "../observe.ts";
import { checkOptionNames } from "../options.ts";
import { causeOf } from "./config-error.ts";

/** `createPetStore({ breaker })`: the numbers, and who to tell when it opens or closes. */
export interface BreakerOptions {
  /** Failed calls in a row (no success between them) that open the breaker. Default 5. */
  failures?: number;
  /** While open, one call in this many ms goes to the backend as a probe. Default 250. */
  probeIntervalMs?: number;
  /** Called when the breaker opens or closes (what it throws is ignored). */
  onChange?: (change: BreakerObservation) => void;
}

export const DEFAULT_BREAKER = { failures: 5, probeIntervalMs: 250 } as const;

/** Probes in flight at most: a frozen backend holds each one until its time-out. */
const MAX_PROBES = 3;

/** What the breaker lets a call do: reach the backend, reach it as a probe, or fail fast. */
export type Admission = "call" | "probe" | "refused";

export class Breaker {
  private readonly threshold: number;
  private readonly probeIntervalMs: number;
  private inARow = 0;
  private open = false;
  private lastProbe = 0;
  private probes = 0;
  /** The answer while open: one error, made once (no stack per refused call). */
  readonly refusal: PetStoreError;

  constructor(
    private readonly backend: string,
    options: BreakerOptions,
    private readonly tell: (change: BreakerObservation) => void,
  ) {
    this.threshold = options.failures ?? DEFAULT_BREAKER.failures;
    this.probeIntervalMs = options.probeIntervalMs ?? DEFAULT_BREAKER.probeIntervalMs;
    this.refusal = Object.freeze(
      new PetStoreError("storage_unavailable", undefined, {
        cause: new Error(`${backend} storage: the breaker is open after failed calls in a row; failing fast`),
      }),
    );
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** Whether a call may go to the backend now. */
  admit(): Admission {
    if (!this.open) return "call";
    const now = performance.now();
    if (this.probes >= MAX_PROBES || now - this.lastProbe < this.probeIntervalMs) return "refused";
    this.lastProbe = now;
    this.probes++;
    return "probe";
  }

  /** A call (a probe or not) succeeded: the backend answers. */
  succeeded(admission: Admission): void {
    if (admission === "probe") this.probes--;
    this.inARow = 0;
    if (this.open) {
      this.open = false;
      this.tell({ kind: "breaker", state: "closed", backend: this.backend, failures: 0 });
    }
  }

  /** A call failed as a down backend fails (a time-out, a lost connection); `failure` says how, for the log. */
  failed(admission: Admission, failure?: unknown): void {
    if (admission === "probe") this.probes--;
    this.inARow++;
    if (!this.open && this.inARow >= this.threshold) {
      this.open = true;
      this.lastProbe = performance.now();
      const cause = describeCause(failure);
      this.tell({
        kind: "breaker",
        state: "open",
        backend: this.backend,
        failures: this.inARow,
        ...(cause && { cause }),
      });
    }
  }

  /** A call ended some other way (an invalid stored value): it says nothing about the backend. */
  settled(admission: Admission): void {
    if (admission === "probe") this.probes--;
  }
}

/**
 * The last failure's cause in one line, for the log of an opening breaker: what the underlying
 * error (a driver's, or the time-out's) says, as start-up errors say it, credentials taken out.
 */
function describeCause(failure: unknown): string | undefined {
  let error = failure;
  while (error instanceof PetStoreError && error.cause !== undefined) error = error.cause;
  if (error === undefined || error instanceof PetStoreError) return undefined;
  const words = causeOf(error).replace(/\/\/[^/@\s]*@/g, "//***@");
  return words.length > 200 ? `${words.slice(0, 200)}…` : words;
}

/** The breaker option checked: `false` turns it off; numbers must be positive integers. */
export function checkBreaker(option: unknown): BreakerOptions | false {
  if (option === false) return false;
  if (option === undefined) return {};
  checkOptionNames("createPetStore: breaker", option, ["failures", "probeIntervalMs", "onChange"]);
  const { failures, probeIntervalMs, onChange } = option as BreakerOptions;
  for (const [name, value] of [
    ["failures", failures],
    ["probeIntervalMs", probeIntervalMs],
  ] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
      throw new TypeError(`createPetStore: breaker.${name} must be a positive integer (got ${JSON.stringify(value)})`);
    }
  }
  if (onChange !== undefined && typeof onChange !== "function") {
    throw new TypeError("createPetStore: breaker.onChange must be a function (change) => void");
  }
  return option as BreakerOptions;
}
