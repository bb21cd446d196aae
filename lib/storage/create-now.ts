/**
 * An in-process storage's create that answers at once, behind a symbol on its `create` (not
 * public API). The port's `create` returns a promise, as it promises every caller; the core takes
 * this twin instead, so that a create over memory storage needs no promise from body to answer.
 * It sits on the function itself: a storage whose `create` was replaced (a wrapper, a spy) has
 * none, and its own `create` is called.
 */
import type { Pet } from "../schemas.ts";
import type { PetData } from "./port.ts";

export const CREATE_NOW = Symbol("petstore-lib: create now");

/** `create`, with the synchronous twin it stands for. */
export type CreateWithTwin = ((data: PetData) => Promise<Pet>) & { [CREATE_NOW]: (data: PetData) => Pet };

/** Marks `create` as having the synchronous twin `now` (the same write, answered at once). */
export function withTwin(create: (data: PetData) => Promise<Pet>, now: (data: PetData) => Pet): CreateWithTwin {
  return Object.assign(create, { [CREATE_NOW]: now });
}

/** The synchronous twin of a storage's `create`, when it has one. */
export function createNowOf(create: unknown): ((data: PetData) => Pet) | undefined {
  const now = typeof create === "function" ? (create as Partial<CreateWithTwin>)[CREATE_NOW] : undefined;
  return typeof now === "function" ? now : undefined;
}
