/** The checks the Bun and Deno server examples share: run it as its comment says, talk to it, stop it; the key it prints. */
import { join } from "node:path";
import * as assert from "uvu/assert";
import { ROOT, startProgram } from "./program.ts";
import type { Runtime } from "./runtimes.ts";
import { missingRuntime } from "./runtimes.ts";

/** The command line of each example's comment (Deno with only the permissions it names). */
const FLAGS: Record<Runtime, string[]> = { bun: [], deno: ["run", "--allow-net", "--allow-env", "--allow-read"] };

/**
 * Starts `file` under `runtime` on a free port; checks the application's fallback route, 401,
 * a create and the list; then SIGTERM: "stopped" and exit code 0.
 */
export async function checkServerExample(runtime: Runtime, file: string, banner: RegExp): Promise<void> {
  const why = missingRuntime(runtime);
  if (why !== undefined) throw new Error(`${runtime} cannot run: ${why}`); // only with CI=true: else skipped
  const program = startProgram(
    [...FLAGS[runtime], file],
    { PORT: "0", PETSTORE_API_KEY: "example-key" },
    { command: join(ROOT, "node_modules", ".bin", runtime) },
  );
  try {
    const line = await program.line(banner, 60_000);
    const base = /(http:\/\/127\.0\.0\.1:\d+)\//.exec(line)?.[1];
    assert.ok(base, line);
    const tryLine = await program.line(/^try: curl/, 10_000);
    assert.is(
      tryLine,
      `try: curl -H "Authorization: Bearer $PETSTORE_API_KEY" ${base}/v1/pets`,
      "a key from the environment is not printed",
    );
    const home = await fetch(`${base}/`);
    assert.is(await home.text(), "Welcome to Happy Paws. The pet API lives under /v1.");
    const anonymous = await fetch(`${base}/v1/pets`);
    assert.is(anonymous.status, 401);
    await anonymous.text();
    const auth = { authorization: "Bearer example-key" };
    const created = await fetch(`${base}/v1/pets`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: '{"name":"Tom","categoryId":2,"status":"pending"}',
    });
    assert.is(created.status, 201);
    assert.is(created.headers.get("location"), "/v1/pets/1");
    await created.text();
    const list = await fetch(`${base}/v1/pets?status=pending`, { headers: auth });
    assert.is(await list.text(), '[{"id":1,"name":"Tom","categoryId":2,"status":"pending"}]');
    program.child.kill("SIGTERM");
    assert.is(await program.exited(20_000), 0, program.stderr());
    assert.match(program.stdout(), /\nstopped\n$/);
    assert.is(program.stderr(), "");
    assert.not.ok(program.stdout().includes("example-key"));
  } finally {
    await program.kill();
  }
}

/** Starts `file` under `runtime` without PETSTORE_API_KEY: it prints a curl with the example's own key, which works. */
export async function checkPrintedKey(runtime: Runtime, file: string): Promise<void> {
  const why = missingRuntime(runtime);
  if (why !== undefined) throw new Error(`${runtime} cannot run: ${why}`);
  const program = startProgram(
    [...FLAGS[runtime], file],
    { PORT: "0" },
    { command: join(ROOT, "node_modules", ".bin", runtime) },
  );
  try {
    const line = await program.line(/^try: curl/, 60_000);
    const [, key = "", url = ""] =
      /^try: curl -H "Authorization: Bearer (\S+)" (http:\/\/127\.0\.0\.1:\d+\/v1\/pets)$/.exec(line) ?? [];
    assert.is(key, "pets-api-key", line);
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    assert.is(res.status, 200);
    await res.text();
  } finally {
    await program.kill();
  }
}
