/**
 * `petstore-lib/schemas`: the contract's data as valibot schemas (each also names its type), the
 * pet statuses, and the deprecation dates the answers carry by default.
 *
 * @example import { NewPet, Pet } from "petstore-lib/schemas";
 */
export type { CheckedNewPet } from "../schemas.ts";
export {
  DEFAULT_DEPRECATED_AT,
  DEFAULT_SUNSET_AT,
  ErrorSchema,
  ListQuery,
  NewPet,
  PET_STATUSES,
  Pet,
  PetStatus,
  Pets,
} from "../schemas.ts";
