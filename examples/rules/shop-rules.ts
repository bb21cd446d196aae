/**
 * An embedding application's own business rules, given to the store once: they apply to every
 * create, through any adapter and in process, so the rule and the API never disagree.
 * The spec cannot know the shop's categories; the shop does. In your project, import from
 * "petstore-lib" and "petstore-lib/schemas" instead of the paths below.
 */
import type { Pet } from "../../lib/entries/schemas.ts";
import type { PetStoreRules } from "../../lib/index.ts";
import { RuleViolation } from "../../lib/index.ts";

/** The host application's own category list (in a real shop: its catalogue, its database). */
export interface Catalogue {
  categoryName(id: number): string | undefined;
}

export const CATALOGUE: Catalogue = {
  categoryName: (id) => ({ 1: "Dogs", 2: "Cats", 3: "Birds" })[id],
};

/**
 * The shop's rules: a pet's category must be one of the catalogue's (422 `unknown_category`),
 * and a shop never lists a pet as sold the moment it arrives (409 `sold_on_arrival`). Every stored
 * pet is written to `audit` before the client sees its 201.
 */
export function shopRules(catalogue: Catalogue, audit: (line: string) => void): PetStoreRules {
  return {
    beforeCreate(pet) {
      if (catalogue.categoryName(pet.categoryId) === undefined) {
        throw new RuleViolation("unknown_category", `categoryId ${pet.categoryId} is not one of our categories.`);
      }
      if (pet.status === "sold") {
        throw new RuleViolation("sold_on_arrival", "A new pet cannot be sold already.", { status: 409 });
      }
    },
    afterCreate(pet: Pet, context) {
      audit(`pet ${pet.id} (${catalogue.categoryName(pet.categoryId)}) created by request ${context.requestId}`);
    },
    codes: [
      { code: "unknown_category", status: 422, description: "categoryId is not one of the shop's categories." },
      { code: "sold_on_arrival", status: 409, description: "A new pet cannot be created as sold." },
    ],
  };
}
