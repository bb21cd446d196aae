/** examples/deno: Deno.serve with the fetch handler, run with the permissions its comment names. */
import { test } from "uvu";
import { checkServerExample } from "../support/fetch-examples.ts";
import { runtimeAvailable } from "../support/runtimes.ts";

if (runtimeAvailable("deno", "examples/deno")) {
  test("examples/deno: Deno.serve (--allow-net --allow-env --allow-read) serves the pet store under /v1 and the application's route beside it; SIGTERM stops it with exit 0", () =>
    checkServerExample("deno", "examples/deno/server.ts", /Deno\.serve listening on/));
}

test.run();
