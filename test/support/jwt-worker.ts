/**
 * A pet store taking OAuth 2.0 access tokens (`jwt()`) behind createFetchHandler as a Cloudflare
 * Worker, run by workerd through Miniflare: the issuer and audience come from its bindings
 * (ISSUER, AUDIENCE), as a deployed Worker's vars would. jose verifies on Web Crypto.
 */
import { createFetchHandler } from "../../adapters/fetch.ts";
import { jwt } from "../../lib/entries/auth.ts";
import { createPetStore } from "../../lib/index.ts";

let handler: ((request: Request) => Promise<Response>) | undefined;

export default {
  fetch(request: Request, env: { ISSUER: string; AUDIENCE: string }) {
    handler ??= createFetchHandler(createPetStore({ auth: jwt({ issuer: env.ISSUER, audience: env.AUDIENCE }) }));
    return handler(request);
  },
};
