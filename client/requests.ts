/**
 * The requests of the three operations, built from the same arguments the in-process store takes.
 * What the store refuses before any storage call (an unknown query field, a petId that is no
 * decimal number, a malformed key) is refused here too, with the same error, without a request.
 */

import { PetStoreError } from "../lib/errors.ts";
import type { ListPetsInput } from "../lib/index.ts";

const QUERY_FIELDS = ["limit", "status", "cursor"];

function badQuery(path: string, message: string): PetStoreError {
  return new PetStoreError("invalid_query", undefined, { details: [{ path, message }] });
}

/** The query string of `listPets(query)` ("" or "?limit=…"); the server checks the values. */
export function listQuery(query: ListPetsInput | undefined): string {
  if (query === undefined) return "";
  if (query === null || typeof query !== "object") throw badQuery("", "must be an object");
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (!QUERY_FIELDS.includes(name)) throw badQuery(name, "is an unknown field");
    if (value === undefined) continue;
    if (name === "limit" ? typeof value !== "number" : typeof value !== "string") {
      throw badQuery(name, name === "limit" ? "must be an integer" : "must be a string");
    }
    params.set(name, String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

/** The path segment of a petId: its decimal digits, or `invalid_pet_id` (as the store says). */
export function petIdSegment(id: number | string): string {
  const text = typeof id === "number" || typeof id === "string" ? String(id) : "";
  if (!/^[0-9]{1,16}$/.test(text)) throw new PetStoreError("invalid_pet_id");
  return text;
}

/** The NewPet as a JSON body; a value JSON cannot carry is `invalid_body`, as the store says. */
export function newPetBody(input: unknown): string {
  let body: string | undefined;
  try {
    body = JSON.stringify(input);
  } catch {}
  if (body === undefined) throw new PetStoreError("invalid_body", "The request body is not a valid NewPet.");
  return body;
}
