/**
 * The mock API: a real, stateful Pet Store (the test kit's in-process store) behind Mock Service
 * Worker handlers for the API's URL. The same handlers serve Node tests (msw/node) and the browser
 * (msw/browser's service worker).
 *
 * In your project: `petstore-lib/testing` (bundlers pick its browser build) and `petstore-lib/msw`.
 */
import { petStoreHandlers } from "../../adapters/msw.ts";
import { createTestStore } from "../../testing/browser.ts";
import { API } from "./api.ts";

export const KEY = "front-end-key";

/** A test store seeded with three pets, and the msw handlers that answer `API` with it. */
export async function petStoreMock() {
  const store = await createTestStore({
    key: KEY,
    pets: [
      { name: "Rex", categoryId: 1 },
      { name: "Tom", categoryId: 2 },
      { name: "Kiki", categoryId: 3 },
    ],
  });
  return { store, handlers: petStoreHandlers(store, { baseUrl: API }) };
}
