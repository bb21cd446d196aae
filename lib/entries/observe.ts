/**
 * `petstore-lib/observe`: what a store tells its `observe` callback (one observation per request,
 * storage call, breaker change, rate-limit refusal and invalid record) and the shape of the
 * `tracerProvider` it accepts.
 *
 * @example import type { Observation } from "petstore-lib/observe";
 */
export type {
  BreakerObservation,
  InvalidRecordObservation,
  Observation,
  Observer,
  RateLimitObservation,
  RequestObservation,
  StorageObservation,
  StorageOperation,
} from "../observe.ts";
export type { TracerProviderLike } from "../tracer-provider.ts";
