/** Shared test helpers: a store with a known key, and a terse way to call handle(). */
import type { PetStore, PetStoreOptions, PetStoreRequest, PetStoreResponse } from "../../lib/index.ts";
import { createPetStore } from "../../lib/index.ts";

export const KEY = "test-key-0123456789";
export const AUTH = `Bearer ${KEY}`;

export function makeStore(options: Partial<PetStoreOptions> = {}): PetStore {
  return createPetStore({ auth: [KEY], onError: () => {}, ...options });
}

export interface Call {
  headers?: Record<string, string | string[] | undefined>;
  body?: PetStoreRequest["body"];
  /** Send the valid key (default true). */
  auth?: boolean;
  query?: string;
}

/** Calls handle() like an HTTP client would: JSON content type for POST, the key unless auth: false. */
export function call(store: PetStore, method: string, path: string, c: Call = {}): Promise<PetStoreResponse> {
  const headers: Record<string, string | string[] | undefined> = {};
  if (c.auth !== false) headers.authorization = AUTH;
  if (method === "POST") headers["content-type"] = "application/json";
  Object.assign(headers, c.headers);
  const request: PetStoreRequest = { method, path, headers, body: c.body };
  if (c.query !== undefined) request.query = c.query;
  return store.handle(request);
}

export function json(response: PetStoreResponse): unknown {
  return JSON.parse(response.body);
}

/** The parsed Error body, checked for the contract's shape on the way. */
export function errorOf(response: PetStoreResponse): {
  code: string;
  message: string;
  status: number;
  details?: { path: string; message: string }[];
} {
  const body = JSON.parse(response.body);
  if (typeof body.code !== "string" || typeof body.message !== "string" || body.status !== response.status) {
    throw new Error(`not a contract Error body for status ${response.status}: ${response.body}`);
  }
  return body;
}

export function nextLink(response: PetStoreResponse): string | undefined {
  const link = response.headers.link;
  if (link === undefined) return undefined;
  const m = /^<([^>]+)>; rel="next"$/.exec(link);
  return m?.[1];
}

export async function createMany(
  store: PetStore,
  n: number,
  status?: (i: number) => "available" | "pending" | "sold" | undefined,
) {
  const pets = [];
  for (let i = 0; i < n; i++) {
    pets.push(await store.createPet({ name: `pet ${i}`, categoryId: 1 + (i % 7), status: status?.(i) ?? "available" }));
  }
  return pets;
}
