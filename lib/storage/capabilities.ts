/**
 * What a storage says about itself that lets the core skip work: each capability is a promise the
 * backend makes (the memory storage makes both). `inProcess`, the deprecated name of the two
 * together, still decides both when it is given, false included (`{ ...memoryStorage(), inProcess: false }`).
 */
import type { PetStorage } from "./port.ts";

/** Its calls cannot hang or lose a backend: no time-out timer, no breaker, readiness without a read. */
export function cannotHang(storage: PetStorage): boolean {
  return storage.inProcess ?? storage.cannotHang === true;
}

/** Every pet it returns was built from what the core validated, and never changes: pages are not checked pet by pet. */
export function hasTrustedPets(storage: PetStorage): boolean {
  return storage.inProcess ?? storage.trustedPets === true;
}
