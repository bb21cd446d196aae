/**
 * The front end's own API code, as an application has it: plain `fetch` to the Pet Store at its
 * real URL. Nothing here knows about mocks; msw answers these requests in tests and in the browser.
 */
export const API = "https://api.example/v1";

/** A page of pets: their names, the next page's URL (from `Link`) and the answer's `X-Request-Id`. */
export async function listPets(key: string, limit = 2) {
  const res = await fetch(`${API}/pets?limit=${limit}`, { headers: { authorization: `Bearer ${key}` } });
  if (!res.ok) throw new Error(`listPets: ${res.status} ${((await res.json()) as { code: string }).code}`);
  const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
  const names = ((await res.json()) as { name: string }[]).map((pet) => pet.name);
  return { names, next, requestId: res.headers.get("x-request-id") };
}

/** Adds a pet once, however often it is sent with the same `idempotencyKey`. */
export async function addPet(key: string, pet: { name: string; categoryId: number }, idempotencyKey: string) {
  const res = await fetch(`${API}/pets`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idempotencyKey },
    body: JSON.stringify(pet),
  });
  const body = (await res.json()) as { id?: number; code?: string };
  return { status: res.status, id: body.id, replayed: res.headers.get("idempotent-replayed") === "true" };
}
