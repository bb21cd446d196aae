/**
 * When a store's storage last answered a read: readiness (`ready()`) trusts a read of the last
 * second instead of making one of its own, and forgets it as soon as the backend fails a call.
 * The guard tells it how each call ended, as it tells the breaker. None for in-process storage,
 * which readiness simply reads.
 */
import type { PetStoreError } from "../errors.ts";
import type { StorageOperation } from "../observe.ts";

/** How long a successful read of the storage vouches for it. */
const VOUCHES_MS = 1000;

export class ReadClock {
  private readAt = Number.NEGATIVE_INFINITY;

  /**
   * A call ended: a read that succeeded, or met an invalid record (the backend answered), vouches
   * for the storage; an outage on any call forgets what vouched.
   */
  settled(operation: StorageOperation, failure?: PetStoreError): void {
    if (failure === undefined || failure.code === "internal_error") {
      if (operation === "listPets" || operation === "getPet" || operation === "ready") this.readAt = performance.now();
    } else if (failure.code === "storage_unavailable") this.readAt = Number.NEGATIVE_INFINITY;
  }

  /** True when a read succeeded within the last second and no outage came after it. */
  readLately(): boolean {
    return performance.now() - this.readAt < VOUCHES_MS;
  }
}
