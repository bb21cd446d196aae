/**
 * Signals are a request to stop, counted once: SIGTERM or SIGINT to the primary, to a worker or to
 * the whole process group, and the same signal twice within a moment, all stop the server
 * gracefully (the slow request in flight gets its 201, the pet is stored, exit 0); a second signal
 * past the window exits at once and leaves nothing running. One process and two workers.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { countStops, SAME_STOP_MS } from "../../server/cli.ts";
import { startProgram } from "../support/program.ts";
import { type Launch, type Processes, runStopCases, type StopCase, sleep } from "../support/stop-case.ts";

/** The server from the checkout (`node --import tsx server/cli.ts`), leading its own process group. */
const fromCheckout: Launch = (env) =>
  startProgram(["server/cli.ts"], { PATH: process.env.PATH ?? "", ...env }, { inheritEnv: false, detached: true });

const toGroup = (p: Processes, signal: NodeJS.Signals) => process.kill(-p.leader, signal);

/** The cases of both kinds of server. */
const common: StopCase[] = [
  { name: "SIGTERM to the primary", send: (p) => process.kill(p.primary, "SIGTERM") },
  { name: "SIGINT to the primary", send: (p) => process.kill(p.primary, "SIGINT") },
  { name: "SIGINT to the group (Ctrl-C)", send: (p) => toGroup(p, "SIGINT") },
  {
    name: "SIGINT to the group, then to the primary 60 ms later (a terminal and npm)",
    async send(p) {
      toGroup(p, "SIGINT");
      await sleep(60);
      process.kill(p.primary, "SIGINT");
    },
  },
  {
    name: "SIGINT to the group twice, 1.2 s apart (a deliberate second Ctrl-C)",
    send: (p) => toGroup(p, "SIGINT"),
    again: (p) => toGroup(p, "SIGINT"),
  },
];

/** The cases only a server with workers has. */
const withWorkers: StopCase[] = [
  { name: "SIGTERM to one worker", send: (p) => process.kill(p.workers[0] as number, "SIGTERM") },
  { name: "SIGTERM to the group (systemd's KillMode=control-group)", send: (p) => toGroup(p, "SIGTERM") },
];

test("countStops: the first request stops, one within the window is the same, a later one exits", () => {
  const count = countStops(1000);
  assert.is(count(10_000), "stop");
  assert.is(count(9_990), "same", "a worker may have seen the signal just before the primary");
  assert.is(count(10_999), "same");
  assert.is(count(11_000), "exit");
  assert.is(SAME_STOP_MS, 1000);
});

test("one process: every way of stopping is graceful, a second signal past the window exits at once", async () => {
  await runStopCases(common.map((stopCase) => [fromCheckout, 1, stopCase]));
});

test("two workers: every way of stopping is graceful, a second signal past the window exits at once", async () => {
  await runStopCases([...common, ...withWorkers].map((stopCase) => [fromCheckout, 2, stopCase]));
});

test.run();
