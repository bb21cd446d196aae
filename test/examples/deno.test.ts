/** examples/deno: Deno.serve with the fetch handler, run with the permissions its comment names. */
import { test } from "uvu";
import { checkPrintedKey, checkServerExample } from "../support/fetch-examples.ts";
import { runtimeAvailable } from "../support/runtimes.ts";

if (runtimeAvailable("deno", "examples/deno")) {
  test("examples/deno: Deno.serve (--allow-net --allow-env --allow-read) serves the pet store under /v1 and the application's route beside it; SIGTERM stops it with exit 0", () =>
    checkServerExample("deno", "examples/deno/server.ts", /Deno\.serve listening on/));
  test("examples/deno: it prints a curl to paste with its key (the example's own; one from PETSTORE_API_KEY is not printed)", () =>
    checkPrintedKey("deno", "examples/deno/server.ts"));
}

test.run();
