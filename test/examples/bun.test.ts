/** examples/bun: Bun.serve with the fetch handler, the application's own routes in `fallback`. */
import { test } from "uvu";
import { checkPrintedKey, checkServerExample } from "../support/fetch-examples.ts";
import { runtimeAvailable } from "../support/runtimes.ts";

if (runtimeAvailable("bun", "examples/bun")) {
  test("examples/bun: Bun.serve serves the pet store under /v1 and the application's route beside it; SIGTERM stops it with exit 0", () =>
    checkServerExample("bun", "examples/bun/server.ts", /Bun\.serve listening on/));
  test("examples/bun: it prints a curl to paste with its key (the example's own; one from PETSTORE_API_KEY is not printed)", () =>
    checkPrintedKey("bun", "examples/bun/server.ts"));
}

test.run();
