/**
 * The pet store in a Next.js application (App Router): this route handler file, at
 * app/v1/[...path]/route.ts, hands every request under /v1 to the fetch handler. Next.js calls
 * each exported method with the Web standard Request. One store per server process (module
 * scope); Node.js runtime, never cached.
 *
 * In your project: import from "petstore-lib" and "petstore-lib/fetch" instead of the paths below.
 */
import { createFetchHandler } from "../../../../../adapters/fetch.ts";
import { createPetStore } from "../../../../../lib/index.ts";

const store = createPetStore({ auth: [process.env.PETSTORE_API_KEY ?? "pets-api-key"] });
const handler = createFetchHandler(store);

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export {
  handler as DELETE,
  handler as GET,
  handler as HEAD,
  handler as OPTIONS,
  handler as PATCH,
  handler as POST,
  handler as PUT,
};
