import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { serverProject } from "../support/packed.ts";
import { startProgram } from "../support/program.ts";
import { type Launch, type Processes, runStopCases, type StopCase } from "../support/stop-case.ts";
import { npmEnv } from "../support/tarball.ts";

let project = "";

/** The environment of a nested npm (without the outer npm's npm_* variables) with `env` added. */
function environment(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(npmEnv(env)).filter((e): e is [string, string] => e[1] !== undefined));
}

/** `npm start` in the repository (scripts/start.mjs: it builds dist/ and server/dist/ when a source changed, then runs the server in its own process). */
const npmStart: Launch = (env) =>
  startProgram(["start"], environment(env), { inheritEnv: false, command: "npm", detached: true });

/**
 * `npx petstore` in the fresh project: npx runs `sh -c petstore`, and its exit code after a Ctrl-C
 * is that shell's (dash dies of the SIGINT itself: 130; bash exits with the server: 0), so only the
 * forced stop, whose exit is nonzero anyway, goes through it here.
 */
const npx: Launch = (env) =>
  startProgram(["petstore"], environment(env), { inheritEnv: false, command: "npx", cwd: project, detached: true });

/** The installed bin itself, as a service manager runs it. */
const bin: Launch = (env) =>
  startProgram([], environment(env), {
    inheritEnv: false,
    command: join(project, "node_modules", ".bin", "petstore"),
    cwd: project,
    detached: true,
  });

const toGroup = (p: Processes, signal: NodeJS.Signals) => process.kill(-p.leader, signal);
/** Ctrl-C in the terminal of `how` (the terminal signals the whole group). */
const ctrlC = (how: string): StopCase => ({
  name: `${how}: Ctrl-C (SIGINT to the group)`,
  send: (p) => toGroup(p, "SIGINT"),
});

test.before(() => {
  project = serverProject(); // petstore-server's tarball and the library's, as a user installs them
});

test("npm start and the packed bin: Ctrl-C and SIGTERM to the group stop gracefully (npm exits 0)", async () => {
  // The two `npm start` one after the other: each builds dist/ in the repository.
  const npmCases = (async () => {
    await runStopCases([[npmStart, 2, ctrlC("npm start")]]);
    await runStopCases([[npmStart, 1, ctrlC("npm start")]]);
  })();
  const packedCases = runStopCases([
    [bin, 2, ctrlC("the bin")],
    [bin, 2, { name: "the bin: SIGTERM to the group (systemd)", send: (p) => toGroup(p, "SIGTERM") }],
    [
      npx,
      1,
      {
        name: "npx petstore: Ctrl-C twice, 1.2 s apart",
        send: (p) => toGroup(p, "SIGINT"),
        again: (p) => toGroup(p, "SIGINT"),
      },
    ],
  ]);
  const results = await Promise.allSettled([npmCases, packedCases]);
  const failures = results.flatMap((r) => (r.status === "rejected" ? [(r.reason as Error).message] : []));
  assert.equal(failures, [], failures.join("\n\n"));
});

test.run();
