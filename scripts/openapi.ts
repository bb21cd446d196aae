/**
 * Writes the OpenAPI document to openapi.json at the repository root (`npm run openapi`).
 * test/openapi/document.test.ts fails when the committed file differs from what this writes.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildOpenApi } from "../lib/openapi.ts";

const target = fileURLToPath(new URL("../openapi.json", import.meta.url));
writeFileSync(target, `${JSON.stringify(buildOpenApi(), null, 2)}\n`);
console.log(`wrote ${target}`);
