/**
 * A small Pet Store client, as an application that calls the API would write it: it retries a
 * read answered 503 (after the `Retry-After` the server asks for, capped), and gives up on an
 * answer slower than its time-out. Tested against `startTestServer` in pet-client.test.ts (uvu)
 * and pet-client.node-test.ts (node:test).
 */
export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: "available" | "pending" | "sold";
}

export interface ClientOptions {
  /** e.g. "https://api.example.com/v1" (a test server's `url`). */
  baseUrl: string;
  key: string;
  /** How many times a read answered 503 is tried again (default 2). */
  retries?: number;
  /** Longest wait before a retry, whatever `Retry-After` says (default 1000 ms). */
  maxRetryDelayMs?: number;
  /** An answer slower than this is given up (default 5000 ms). */
  timeoutMs?: number;
}

/** The API answered with an Error body. */
export class PetApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "PetApiError";
  }
}

/** No answer within the client's time-out. */
export class PetApiTimeout extends Error {
  constructor(readonly ms: number) {
    super(`the Pet Store did not answer within ${ms} ms`);
    this.name = "PetApiTimeout";
  }
}

export function createPetClient(options: ClientOptions) {
  const { baseUrl, key, retries = 2, maxRetryDelayMs = 1000, timeoutMs = 5000 } = options;

  async function send(method: string, path: string, body?: unknown): Promise<Response> {
    try {
      return await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      if ((error as Error).name === "TimeoutError") throw new PetApiTimeout(timeoutMs);
      throw error;
    }
  }

  async function result<T>(response: Response): Promise<T> {
    const json = (await response.json()) as { code: string; message: string };
    if (!response.ok) throw new PetApiError(response.status, json.code, json.message);
    return json as T;
  }

  /** A read, tried again on 503 (reads are safe to repeat; a create is not, without an idempotency key). */
  async function read<T>(path: string): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const response = await send("GET", path);
      if (response.status !== 503 || attempt >= retries) return result<T>(response);
      await response.body?.cancel();
      const seconds = Number(response.headers.get("retry-after") ?? "1");
      await new Promise((resolve) => setTimeout(resolve, Math.min(seconds * 1000, maxRetryDelayMs)));
    }
  }

  return {
    listPets: (status?: Pet["status"]) => read<Pet[]>(status === undefined ? "/pets" : `/pets?status=${status}`),
    addPet: async (pet: { name: string; categoryId: number; status?: Pet["status"] }) =>
      result<Pet>(await send("POST", "/pets", pet)),
  };
}
