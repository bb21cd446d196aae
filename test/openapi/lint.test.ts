/** openapi.json passes `redocly lint` with redocly.yaml (strict: any warning fails). */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";

const root = fileURLToPath(new URL("../..", import.meta.url));

test("openapi.json: `redocly lint` passes with the rules of redocly.yaml", async () => {
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      process.execPath,
      ["node_modules/@redocly/cli/bin/cli.js", "lint", "openapi.json"],
      {
        cwd: root,
        timeout: 120_000,
        // No telemetry or update check: the lint must not reach the network.
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
      },
      (error, stdout, stderr) => {
        const exit = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code: exit, output: `${stdout}${stderr}` });
      },
    );
  });
  assert.is(code, 0, output);
  assert.match(output, /Your API description is valid/);
  assert.not.match(output, /You have \d+ warnings?/, output);
});

test.run();
