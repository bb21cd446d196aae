/**
 * `npm start` as a user runs it: it builds dist/ silently, serves, and a SIGTERM sent to npm
 * reaches the server, which stops gracefully (exit 0) and leaves no process behind. Bad
 * configuration exits 2 with the server's one line. Nothing changed since the last build: no build
 * (the server answers at once); a source touched: built again.
 */
import { statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT, startProgram } from "../support/program.ts";

/** The lines the server wrote itself, among npm's. */
const serverLines = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("petstore:"));

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test("npm start: builds, serves, and SIGTERM to npm stops the server gracefully with exit 0", async () => {
  const npm = startProgram(["start"], { PORT: "0", PETSTORE_API_KEYS: "npm-start-key" }, { command: "npm" });
  try {
    const line = await npm.line(/listening on (http:\/\/\S+)/, 120_000);
    const base = (/listening on (http:\/\/\S+)/.exec(line) as RegExpExecArray)[1] as string;
    const pets = await fetch(`${base}/pets`, { headers: { authorization: "Bearer npm-start-key" } });
    assert.is(pets.status, 200);
    const server = /"pid":(\d+)/.exec(npm.stdout());
    assert.not.ok(/error TS\d+/.test(npm.stdout()), "the build printed nothing");
    npm.child.kill("SIGTERM");
    assert.is(await npm.exited(20_000), 0, npm.stderr());
    assert.match(npm.stdout(), /"msg":"stopped"/);
    if (server) assert.not.ok(alive(Number(server[1])), "no server process left behind");
  } finally {
    await npm.kill();
  }
});

/** The build's outputs that scripts/start.mjs compares with the sources, by modification time. */
const OUTPUTS = ["dist/lib/index.js", "server/dist/cli.js"].map((file) => join(ROOT, file));
const builtAt = () => OUTPUTS.map((file) => statSync(file).mtimeMs);

/** Runs what `npm start` runs (scripts/start.mjs, in this process's Node) until it listens, then stops it. */
async function startOnce(): Promise<void> {
  const start = startProgram(
    ["scripts/start.mjs"],
    { PORT: "0", PETSTORE_API_KEYS: "npm-start-key" },
    { command: process.execPath },
  );
  try {
    await start.line(/listening on http:\/\//, 180_000);
    start.child.kill("SIGTERM");
    assert.is(await start.exited(20_000), 0, start.stderr());
  } finally {
    await start.kill();
  }
}

test("npm start: nothing changed since the last build, no build; a source touched, built again", async () => {
  await startOnce(); // builds if anything changed: from here on, dist/ is current
  const before = builtAt();
  await startOnce();
  assert.equal(builtAt(), before, "no source changed: dist/ and server/dist/ are left as they are");
  const source = join(ROOT, "lib/version.ts");
  const now = new Date();
  utimesSync(source, now, now);
  await startOnce();
  const after = builtAt();
  assert.ok(
    after.every((mtime, i) => mtime > (before[i] as number)),
    `lib/version.ts touched: both built again (${before} -> ${after})`,
  );
});

test("npm start: an unparsable PORT exits 2 with one line from the server", async () => {
  const npm = startProgram(["start"], { PORT: "eighty" }, { command: "npm" });
  try {
    assert.is(await npm.exited(120_000), 2);
    const ours = serverLines(npm.stderr());
    assert.is(ours.length, 1, npm.stderr());
    assert.match(ours[0] as string, /PORT/);
    assert.not.match(npm.stderr(), /\n\s+at /, "no stack trace");
  } finally {
    await npm.kill();
  }
});

test("npm start --port 4645 (without --): exits 2 with one line that shows `npm start -- --port 4645`", async () => {
  const npm = startProgram(["start", "--port", "4645"], { PETSTORE_API_KEYS: "npm-start-key" }, { command: "npm" });
  try {
    assert.is(await npm.exited(120_000), 2);
    const ours = serverLines(npm.stderr());
    assert.is(ours.length, 1, npm.stderr());
    assert.match(ours[0] as string, /unexpected argument '4645': did you mean `npm start -- --port 4645`\?/);
  } finally {
    await npm.kill();
  }
});

test.run();
